/* carousel: a shop front page (category D) whose hero banner rotates on its own. Only the slide on
 * screen is in the DOM; a slide's content leaves the page when the carousel moves on.
 *
 * [config]
 *   announcement = "Free delivery over $60"    the strip above the header
 *   [config.shop]  name, nav = ["New", ...], hue (logo colour), currency = "$"
 *   [config.carousel]
 *   interval_s = 5          seconds per slide when nobody touches it
 *   pause_on_hover = false  hold the slide while the pointer is over the banner
 *   [[config.slides]]       in rotation order
 *     id, eyebrow, headline, sub, cta, hue (background), art (see ART below), badge ("-20%"),
 *     code (a coupon shown on the slide), code_label ("Use code"), fine (small print),
 *     dark = true (light text on a dark background)
 *   [[config.products]]     tiles: name, price, was, rating (0-5), reviews, art, hue, tag
 *   products_title = "Trending now"
 *   [config.cart]           items = [{name, price, qty, art, hue, variant}], shipping = 0 (free)
 *                           fine = "small print under Checkout"
 *   [config.promo]          field (answer field; default: the first), label, placeholder
 *
 * [[script]] entries (ctx.timeline, seconds after the start):
 *   slide = "<id>", until = T   that slide is in the rotation only from t to until: it comes on
 *                               screen at t (the rotation goes on from there) and leaves at until;
 *                               arrows and dots reach it only inside its window
 *   show = "text", until = T    the announcement strip reads this from t to until
 */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function hueOf(text) {
    let h = 0;
    for (const ch of String(text)) h = (h * 31 + ch.charCodeAt(0)) % 360;
    return h;
  }

  // ---- product art, drawn as SVG (no images) --------------------------------------------------
  function art(name, hue) {
    const h = Number.isFinite(Number(hue)) ? Number(hue) : hueOf(name);
    const main = `hsl(${h} 55% 55%)`, dark = `hsl(${h} 45% 30%)`, light = `hsl(${h} 65% 86%)`;
    const wood = "#b88a5a", ink = "#2b2b2b", white = "#fbfaf7";
    const shapes = {
      lamp: `<circle cx="100" cy="96" r="52" fill="#ffe9a8" opacity="0.35"/><ellipse cx="100" cy="182" rx="46" ry="9" fill="${dark}"/>
        <rect x="95" y="86" width="10" height="94" fill="${ink}"/><path d="M58 86 L76 26 H124 L142 86 Z" fill="${main}"/>
        <path d="M58 86 H142" stroke="${dark}" stroke-width="4"/>`,
      mug: `<path d="M140 82 c30 0 30 50 0 50" fill="none" stroke="${dark}" stroke-width="12"/>
        <rect x="52" y="62" width="94" height="112" rx="14" fill="${main}"/><rect x="52" y="62" width="94" height="16" rx="8" fill="${dark}"/>
        <path d="M80 50 c-10-12 10-20 0-34 M102 50 c-10-12 10-20 0-34 M124 50 c-10-12 10-20 0-34" fill="none" stroke="#c9c9c9" stroke-width="5" stroke-linecap="round"/>`,
      plant: `<ellipse cx="78" cy="70" rx="18" ry="44" transform="rotate(-28 78 70)" fill="#4f9a5a"/>
        <ellipse cx="122" cy="70" rx="18" ry="44" transform="rotate(28 122 70)" fill="#3f8a4c"/>
        <ellipse cx="100" cy="56" rx="16" ry="46" fill="#5bb06a"/><path d="M56 116 H144 L132 184 H68 Z" fill="${main}"/>
        <rect x="50" y="108" width="100" height="16" rx="4" fill="${dark}"/>`,
      chair: `<rect x="52" y="30" width="96" height="86" rx="22" fill="${main}"/><rect x="40" y="96" width="120" height="40" rx="14" fill="${dark}"/>
        <rect x="34" y="80" width="22" height="60" rx="10" fill="${main}"/><rect x="144" y="80" width="22" height="60" rx="10" fill="${main}"/>
        <path d="M56 136 L48 184 M144 136 L152 184" stroke="${wood}" stroke-width="9" stroke-linecap="round"/>`,
      candle: `<rect x="66" y="84" width="68" height="98" rx="8" fill="${light}"/><rect x="66" y="120" width="68" height="40" fill="${main}"/>
        <path d="M100 84 v-14" stroke="${ink}" stroke-width="3"/><path d="M100 30 c14 18 12 36 0 40 c-12-4-14-22 0-40z" fill="#f5a524"/>
        <path d="M100 48 c6 8 5 16 0 18 c-5-2-6-10 0-18z" fill="#ffe27a"/>`,
      vase: `<path d="M84 60 C60 100 58 150 72 184 H128 C142 150 140 100 116 60 Z" fill="${main}"/><rect x="82" y="50" width="36" height="14" rx="4" fill="${dark}"/>
        <path d="M100 52 C96 30 80 22 70 16 M100 52 C104 28 120 20 134 18 M100 52 V10" stroke="#5a8f4e" stroke-width="4" fill="none"/>
        <circle cx="70" cy="16" r="8" fill="#f08aa0"/><circle cx="134" cy="18" r="8" fill="#f7c04a"/><circle cx="100" cy="10" r="8" fill="#fff"/>`,
      pillow: `<path d="M36 54 Q100 36 164 54 Q178 100 164 146 Q100 164 36 146 Q22 100 36 54 Z" fill="${main}"/>
        <path d="M52 70 Q100 58 148 70 Q156 100 148 130 Q100 142 52 130 Q44 100 52 70 Z" fill="none" stroke="${light}" stroke-width="4" stroke-dasharray="6 6"/>
        <circle cx="100" cy="100" r="12" fill="${dark}"/>`,
      sneaker: `<path d="M24 138 C26 112 40 96 58 92 L86 70 C96 84 116 96 140 104 C166 110 180 120 180 138 Z" fill="${main}"/>
        <rect x="20" y="136" width="164" height="22" rx="11" fill="${white}" stroke="#ddd"/>
        <path d="M70 88 l14 10 M80 80 l14 10 M90 74 l14 10" stroke="${white}" stroke-width="5" stroke-linecap="round"/>`,
      bag: `<path d="M70 70 C70 30 130 30 130 70" fill="none" stroke="${dark}" stroke-width="9"/>
        <path d="M42 70 H158 L148 182 H52 Z" fill="${main}"/><rect x="42" y="70" width="116" height="14" fill="${dark}"/>`,
      headphones: `<path d="M46 120 C46 50 154 50 154 120" fill="none" stroke="${dark}" stroke-width="14" stroke-linecap="round"/>
        <rect x="30" y="108" width="38" height="66" rx="16" fill="${main}"/><rect x="132" y="108" width="38" height="66" rx="16" fill="${main}"/>`,
      watch: `<rect x="78" y="14" width="44" height="172" rx="14" fill="${dark}"/><circle cx="100" cy="100" r="48" fill="${white}" stroke="${main}" stroke-width="10"/>
        <path d="M100 100 V72 M100 100 L120 112" stroke="${ink}" stroke-width="5" stroke-linecap="round"/>`,
      gift: `<rect x="38" y="84" width="124" height="96" rx="6" fill="${main}"/><rect x="30" y="64" width="140" height="28" rx="6" fill="${dark}"/>
        <rect x="92" y="64" width="16" height="116" fill="${light}"/><path d="M100 64 C70 30 52 50 70 64 Z M100 64 C130 30 148 50 130 64 Z" fill="${light}"/>`,
      truck: `<rect x="18" y="62" width="104" height="80" rx="6" fill="${main}"/><path d="M122 84 H156 L180 112 V142 H122 Z" fill="${dark}"/>
        <path d="M132 92 H152 L166 110 H132 Z" fill="${light}"/><circle cx="54" cy="148" r="16" fill="${ink}"/><circle cx="150" cy="148" r="16" fill="${ink}"/>
        <circle cx="54" cy="148" r="6" fill="#ddd"/><circle cx="150" cy="148" r="6" fill="#ddd"/>`,
      tag: `<path d="M40 40 H110 L172 102 L102 172 L40 110 Z" fill="${main}"/><circle cx="70" cy="70" r="11" fill="${white}"/>
        <path d="M86 124 L126 84" stroke="${white}" stroke-width="8" stroke-linecap="round"/>`,
      blanket: `<rect x="30" y="60" width="140" height="110" rx="10" fill="${main}"/>
        <path d="M30 86 H170 M30 112 H170 M30 138 H170" stroke="${light}" stroke-width="8"/>
        <path d="M36 170 v10 M52 170 v10 M68 170 v10 M84 170 v10 M100 170 v10 M116 170 v10 M132 170 v10 M148 170 v10 M164 170 v10" stroke="${dark}" stroke-width="4"/>`,
    };
    const body = shapes[name] || shapes.bag;
    return `<svg viewBox="0 0 200 200" class="art" aria-hidden="true">${body}</svg>`;
  }

  let ctx = null;
  let slides = [];          // config slides
  let windows = {};         // slide id -> [{t, until}] from the timeline
  let announcements = [];   // {t, until, text}
  let interval = 5;
  let current = -1;         // index into slides
  let nextSwitch = 0;
  let shownIn = new Set();  // "id@t" of timeline windows whose slide has been shown
  let hovering = false;
  let dotsKey = "";
  let money = (v) => "$" + v.toFixed(2);
  let cart = [];
  let bagCount = 0;
  let applied = false;

  // ---- which slides are in the rotation at time t ---------------------------------------------
  function windowAt(slide, t) {
    const list = windows[slide.id];
    if (!list) return null;
    return list.find((w) => w.t <= t && (w.until === null || t < w.until)) || null;
  }
  function available(i, t) {
    const slide = slides[i];
    return !windows[slide.id] || windowAt(slide, t) !== null;
  }
  function availableList(t) {
    return slides.map((_, i) => i).filter((i) => available(i, t));
  }
  function pickNext(t, step) {
    if (step > 0) {
      const fresh = freshSlide(t);  // a slide whose window just opened goes next
      if (fresh >= 0) return fresh;
    }
    const n = slides.length;
    for (let k = 1; k <= n; k++) {
      const i = (((current + step * k) % n) + n) % n;
      if (available(i, t)) return i;
    }
    return available(current, t) ? current : -1;
  }

  function show(i, t) {
    current = i;
    const stage = $("hero-stage");
    stage.replaceChildren();
    if (i < 0) return;
    const s = slides[i];
    const w = windowAt(s, t);
    if (w) shownIn.add(s.id + "@" + w.t);
    const hue = Number.isFinite(Number(s.hue)) ? Number(s.hue) : hueOf(s.id || s.headline || "");
    const slide = el("div", "slide" + (s.dark ? " dark" : ""));
    slide.style.background = s.dark
      ? `linear-gradient(120deg, hsl(${hue} 40% 18%), hsl(${(hue + 25) % 360} 45% 30%))`
      : `linear-gradient(120deg, hsl(${hue} 60% 92%), hsl(${(hue + 25) % 360} 55% 80%))`;
    const text = el("div", "slide-text");
    if (s.eyebrow) text.append(el("div", "slide-eyebrow", s.eyebrow));
    text.append(el("h2", "slide-headline", s.headline || ""));
    if (s.sub) text.append(el("p", "slide-sub", s.sub));
    if (s.code) {
      const coupon = el("div", "coupon");
      coupon.append(el("span", "coupon-label", s.code_label || "Use code"), el("span", "coupon-code", s.code));
      text.append(coupon);
    }
    if (s.cta) text.append(el("span", "slide-cta", s.cta));
    if (s.fine) text.append(el("div", "slide-fine", s.fine));
    const pic = el("div", "slide-art");
    pic.innerHTML = art(s.art || "bag", hue);
    if (s.badge) pic.append(el("span", "slide-badge", s.badge));
    slide.append(text, pic);
    stage.append(slide);
    $("hero").classList.toggle("dark", Boolean(s.dark));
    renderDots(t, true);
  }

  function renderDots(t, force) {
    const list = availableList(t);
    const key = list.join(",") + "|" + current;
    if (!force && key === dotsKey) return;
    dotsKey = key;
    $("dots").replaceChildren(...list.map((i) => {
      const dot = el("button", "dot" + (i === current ? " on" : ""));
      dot.type = "button";
      dot.setAttribute("aria-label", "Slide " + (list.indexOf(i) + 1));
      dot.addEventListener("click", () => go(i));
      return dot;
    }));
  }

  function freshSlide(t) {
    for (let i = 0; i < slides.length; i++) {
      const w = windowAt(slides[i], t);
      if (w && !shownIn.has(slides[i].id + "@" + w.t)) return i;
    }
    return -1;
  }

  function tick() {
    const t = ctx.now();
    const fresh = freshSlide(t);
    const gone = current >= 0 && !available(current, t);
    const due = t >= nextSwitch;
    if (fresh >= 0 || gone || current < 0 || (due && !hovering)) {
      if (due) { while (nextSwitch <= t) nextSwitch += interval; }
      else nextSwitch = t + interval;
      const i = fresh >= 0 ? fresh : pickNext(t, 1);
      if (i !== current || gone) show(i, t);
    } else if (hovering) {
      nextSwitch = Math.max(nextSwitch, t + 0.1);
    }
    renderDots(t);
  }

  function go(i) {
    if (ctx.result !== "pending" || !window.DynaCU.started) return;
    const t = ctx.now();
    if (i < 0 || !available(i, t)) return;
    nextSwitch = t + interval;
    show(i, t);
  }

  function announce() {
    const t = ctx.now();
    const a = announcements.find((x) => x.t <= t && (x.until === null || t < x.until));
    const text = a ? a.text : (ctx.config.announcement || "");
    if ($("announce").textContent !== text) $("announce").textContent = text;
  }

  // ---- the page around the carousel ------------------------------------------------------------
  function stars(rating) {
    const full = Math.round(Number(rating) || 0);
    return "\u2605".repeat(full) + "\u2606".repeat(Math.max(0, 5 - full));
  }

  function buildPage() {
    const c = ctx.config;
    const shop = c.shop || {};
    const cur = shop.currency || "$";
    money = (v) => cur + Number(v).toFixed(2);
    document.title = shop.name || "Shop";
    $("shop-name").textContent = shop.name || "Shop";
    $("logo-mark").style.background = `hsl(${Number(shop.hue) || 24} 60% 45%)`;
    $("logo-mark").textContent = (shop.name || "S").trim()[0].toUpperCase();
    $("nav").replaceChildren(...(shop.nav || []).map((n) => el("span", "nav-item" + (/sale|offers/i.test(n) ? " sale" : ""), n)));
    $("products-title").textContent = c.products_title || "Trending now";

    const tiles = $("tiles");
    for (const p of (c.products || []).slice(0, 4)) {
      const tile = el("div", "tile");
      const img = el("div", "tile-img");
      const hue = Number.isFinite(Number(p.hue)) ? Number(p.hue) : hueOf(p.name || "");
      img.style.background = `hsl(${hue} 35% 94%)`;
      img.innerHTML = art(p.art || "bag", hue);
      if (p.tag) img.append(el("span", "tile-tag", p.tag));
      const name = el("div", "tile-name", p.name || "");
      const rating = el("div", "tile-rating");
      rating.append(el("span", "stars", stars(p.rating)), el("span", "reviews", p.reviews ? "(" + p.reviews + ")" : ""));
      const price = el("div", "tile-price");
      price.append(el("span", "now", money(p.price || 0)));
      if (p.was) price.append(el("span", "was", money(p.was)));
      const add = el("button", "tile-add", "Add to bag");
      add.type = "button";
      add.addEventListener("click", () => {
        if (ctx.result !== "pending") return;
        cart.push({name: p.name, price: Number(p.price) || 0, qty: 1, art: p.art, hue: p.hue, variant: p.variant || ""});
        renderCart();
        add.textContent = "Added";
      });
      tile.append(img, name, rating, price, add);
      tiles.append(tile);
    }

    const cc = c.cart || {};
    cart = (cc.items || []).map((x) => ({name: x.name, price: Number(x.price) || 0, qty: Number(x.qty) || 1, art: x.art, hue: x.hue, variant: x.variant || ""}));
    $("cart-fine").textContent = cc.fine || "";
    renderCart();

    const promo = c.promo || {};
    $("promo-label").textContent = promo.label || "Promo code";
    $("promo-input").placeholder = promo.placeholder || "Enter code";
    $("promo-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      if (applied || !window.DynaCU.started || ctx.result !== "pending") return;
      const value = $("promo-input").value;
      if (!value.trim()) { $("promo-msg").textContent = "Enter a promo code first"; $("promo-msg").className = "promo-msg"; return; }
      applied = true;
      $("promo-apply").disabled = true;
      $("promo-input").readOnly = true;
      const field = promo.field || Object.keys(ctx.episode.answers)[0];
      const ok = await ctx.checkAnswer(field, value);
      $("promo-msg").textContent = ok ? "Code applied to your order" : "This code isn\u2019t valid";
      $("promo-msg").className = "promo-msg " + (ok ? "good" : "bad");
    });
  }

  function renderCart() {
    const count = cart.reduce((n, x) => n + x.qty, 0);
    $("bag-count").textContent = String(count);
    $("cart-count").textContent = count + (count === 1 ? " item" : " items");
    const items = $("cart-items");
    const shown = cart.slice(0, 3);
    items.replaceChildren(...shown.map((x) => {
      const row = el("div", "cart-item");
      const pic = el("div", "cart-pic");
      const hue = Number.isFinite(Number(x.hue)) ? Number(x.hue) : hueOf(x.name || "");
      pic.style.background = `hsl(${hue} 35% 94%)`;
      pic.innerHTML = art(x.art || "bag", hue);
      const meta = el("div", "cart-meta");
      meta.append(el("div", "cart-name", x.name), el("div", "cart-variant", [x.variant, "Qty " + x.qty].filter(Boolean).join("  \u00b7  ")));
      row.append(pic, meta, el("div", "cart-price", money(x.price * x.qty)));
      return row;
    }));
    if (cart.length > 3) items.append(el("div", "cart-more", "+ " + (cart.length - 3) + " more"));
    const subtotal = cart.reduce((n, x) => n + x.price * x.qty, 0);
    const ship = Number((ctx.config.cart || {}).shipping) || 0;
    $("subtotal").textContent = money(subtotal);
    $("shipping").textContent = ship ? money(ship) : "Free";
    $("total").textContent = money(subtotal + ship);
  }

  DynaCU.task({
    setup(c) {
      ctx = c;
      const cfg = ctx.config.carousel || {};
      interval = Number(cfg.interval_s) || 5;
      slides = (ctx.config.slides || []).map((s, i) => Object.assign({id: "slide-" + (i + 1)}, s));
      for (const e of ctx.timeline) {
        const until = e.until === null || e.until === undefined ? null : Number(e.until);
        if (e.slide !== undefined) (windows[e.slide] = windows[e.slide] || []).push({t: e.t, until});
        else if (e.show) announcements.push({t: e.t, until, text: e.show});
      }
      buildPage();
      announce();
      const first = availableList(0)[0];
      show(first === undefined ? -1 : first, 0);
      nextSwitch = interval;
      $("prev").addEventListener("click", () => go(pickNext(ctx.now(), -1)));
      $("next").addEventListener("click", () => go(pickNext(ctx.now(), 1)));
      if (cfg.pause_on_hover) {
        $("hero").addEventListener("mouseenter", () => { hovering = true; });
        $("hero").addEventListener("mouseleave", () => { hovering = false; nextSwitch = ctx.now() + interval; });
      }
    },
    start(c) {
      nextSwitch = interval;
      c.every(0.1, () => { tick(); announce(); });
      // Exact changes at the edges of the timeline's windows.
      for (const e of c.timeline) {
        c.at(e.t, () => { tick(); announce(); });
        if (e.until !== null && e.until !== undefined) c.at(e.until, () => { tick(); announce(); });
      }
    },
  });
})();
