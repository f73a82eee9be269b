/* carousel: a shop front page (category D) whose hero banner rotates on its own. Only the slide on
 * screen is in the DOM; a slide's content leaves the page when the carousel moves on.
 *
 * [config]
 *   announcement = "Free delivery over $60"    the strip above the header
 *   [config.shop]  name, nav = ["New", ...], hue (logo colour), currency = "$"
 *   [config.carousel]
 *   interval_s = 5          seconds per slide when nobody touches it
 *   pause_on_hover = false  hold the slide while the pointer is over the banner
 *   label = "Deal of the hour"   a tag on the banner's corner
 *   [[config.slides]]       in rotation order
 *     id, eyebrow, headline, sub, cta, hue (background), art (a drawing: lamp, mug, plant,
 *     chair, candle, vase, pillow, sneaker, bag, headphones, watch, gift, truck, tag, blanket,
 *     book, calendar, pan, spoon, tent, mic), badge ("-20%"), code (a coupon shown on the
 *     slide), code_label ("Use code"), fine (small print), dark = true (light text on dark);
 *     a slide may sell a product: name (default: headline), price, was, rating, reviews and
 *     add = true (an "Add to bag" button on the slide instead of the cta)
 *   [[config.products]]     tiles: name, price, was, rating (0-5), reviews, art, hue, tag,
 *                           spec (a line under the name: "2-person  ·  1.9 kg")
 *   products_title = "Trending now"
 *   [config.cart]           items = [{name, price, qty, art, hue, variant}], shipping = 0 (free)
 *                           fine = "small print under Checkout"
 *   [config.promo]          field (answer field; default: the first), label, placeholder
 *   [config.ticker]         label = "Store news": the strip above the header is a news ticker
 *                           (its items are the timeline's show lines, one at a time)
 *   [config.section]        what sits under the banner (default: the four product tiles)
 *     kind = "tiles" | "slider" | "reviews" | "cards"
 *     title, per_page (cards on screen), interval_s (seconds per page; slider and reviews
 *     rotate on their own and have arrows), show_rating = true (the rating as a number)
 *     slider: pages of [[config.products]]; reviews: pages of [[config.reviews]];
 *     cards: pages of [[config.cards]] (small banners: eyebrow, title, sub, meta, art, hue)
 *   [[config.reviews]]      quote, author, stars (1-5), meta ("Verified buyer"), product
 *   [config.form]           an answer form in the bag panel instead of the promo code:
 *                           field, title, label, placeholder, button, options = [...] (choices
 *                           instead of a text box), ok / bad (messages), failure (default
 *                           "wrong_answer")
 *   [config.pick]           field, failure: the first "Add to bag" (tile or slide) is the
 *                           answer, checked against field by the product's name
 *   [config.deadline]       closes_at (seconds), label ("Your bag is reserved for"): a
 *                           countdown in the bag panel; "timeout" when it runs out
 *   [config.live]           a live stream in the corner while the script is spoken:
 *                           kind = "video" (a host on camera) | "assistant" (a voice assistant),
 *                           name, title, viewers, hue
 *
 * [[script]] entries (ctx.timeline, seconds after the start):
 *   slide = "<id>", until = T   that slide is in the rotation only from t to until: it comes on
 *                               screen at t (the rotation goes on from there) and leaves at until;
 *                               arrows and dots reach it only inside its window
 *   show = "text", until = T    the announcement strip (or the ticker) reads this from t to until
 *
 * Only what is on screen is in the DOM: the current slide, the section's current page, the
 * ticker's current item.
 */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const {el} = DynaCU.ui;
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
      book: `<rect x="48" y="34" width="104" height="140" rx="6" fill="${main}"/><rect x="48" y="34" width="16" height="140" fill="${dark}"/>
        <rect x="78" y="60" width="58" height="8" rx="3" fill="${light}"/><rect x="78" y="76" width="42" height="6" rx="3" fill="${light}"/>
        <path d="M58 174 v12 l6 -5 l6 5 v-12" fill="#c0392b"/>`,
      calendar: `<rect x="34" y="46" width="132" height="128" rx="12" fill="${white}" stroke="${dark}" stroke-width="6"/>
        <path d="M34 58 a12 12 0 0 1 12 -12 H154 a12 12 0 0 1 12 12 V84 H34 Z" fill="${main}"/>
        <path d="M66 34 v24 M134 34 v24" stroke="${ink}" stroke-width="8" stroke-linecap="round"/>
        <path d="M58 104 h16 M92 104 h16 M126 104 h16 M58 130 h16 M92 130 h16 M126 130 h16 M58 154 h16 M92 154 h16" stroke="${light}" stroke-width="12"/>`,
      pan: `<rect x="118" y="92" width="74" height="16" rx="8" fill="${ink}"/><ellipse cx="76" cy="104" rx="62" ry="30" fill="${dark}"/>
        <ellipse cx="76" cy="98" rx="54" ry="22" fill="${main}"/>`,
      spoon: `<ellipse cx="70" cy="56" rx="20" ry="30" fill="${main}" transform="rotate(-18 70 56)"/><path d="M76 84 L104 178" stroke="${main}" stroke-width="10" stroke-linecap="round"/>
        <ellipse cx="130" cy="56" rx="20" ry="30" fill="${dark}" transform="rotate(18 130 56)"/><path d="M124 84 L96 178" stroke="${dark}" stroke-width="10" stroke-linecap="round"/>`,
      tent: `<path d="M100 34 L176 170 H24 Z" fill="${main}"/><path d="M100 34 L128 170 H72 Z" fill="${dark}"/>
        <path d="M100 92 L116 170 H84 Z" fill="${light}"/><path d="M100 34 V20" stroke="${ink}" stroke-width="5" stroke-linecap="round"/>
        <path d="M14 172 H186" stroke="${ink}" stroke-width="5" stroke-linecap="round"/>`,
      mic: `<rect x="78" y="26" width="44" height="86" rx="22" fill="${main}"/><path d="M60 92 C60 142 140 142 140 92" fill="none" stroke="${dark}" stroke-width="8"/>
        <path d="M100 134 V170 M74 172 H126" stroke="${dark}" stroke-width="8" stroke-linecap="round"/>`,
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
  let picked = false;

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
    const slide = el("div", {class: "slide" + (s.dark ? " dark" : "")});
    slide.dataset.name = productOf(s).name;
    slide.style.background = s.dark
      ? `linear-gradient(120deg, hsl(${hue} 40% 18%), hsl(${(hue + 25) % 360} 45% 30%))`
      : `linear-gradient(120deg, hsl(${hue} 60% 92%), hsl(${(hue + 25) % 360} 55% 80%))`;
    const text = el("div.slide-text");
    if (s.eyebrow) text.append(el("div.slide-eyebrow", {text: s.eyebrow}));
    text.append(el("h2.slide-headline", {text: s.headline || ""}));
    if (s.sub) text.append(el("p.slide-sub", {text: s.sub}));
    if (s.code) {
      const coupon = el("div.coupon");
      coupon.append(el("span.coupon-label", {text: s.code_label || "Use code"}), el("span.coupon-code", {text: s.code}));
      text.append(coupon);
    }
    if (s.price !== undefined) {
      if (s.rating !== undefined) {
        const r = el("div.slide-rating");
        r.append(el("span.stars", {text: stars(s.rating)}), el("span.rating-num", {text: Number(s.rating).toFixed(1)}),
          el("span.reviews", {text: s.reviews ? "(" + s.reviews + " reviews)" : ""}));
        text.append(r);
      }
      const price = el("div.slide-price");
      price.append(el("span.now", {text: money(s.price)}));
      if (s.was) price.append(el("span.was", {text: money(s.was)}));
      text.append(price);
    }
    if (s.add) {
      const add = el("button.slide-cta.slide-add", {text: s.cta || "Add to bag"});
      add.type = "button";
      add.addEventListener("click", () => addToBag(productOf(s), add));
      text.append(add);
    } else if (s.cta) text.append(el("span.slide-cta", {text: s.cta}));
    if (s.fine) text.append(el("div.slide-fine", {text: s.fine}));
    const pic = el("div.slide-art");
    pic.innerHTML = art(s.art || "bag", hue);
    if (s.badge) pic.append(el("span.slide-badge", {text: s.badge}));
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
      const dot = el("button", {class: "dot" + (i === current ? " on" : "")});
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
    const node = $("announce-text") || $("announce");
    if (node.textContent !== text) {
      node.textContent = text;
      if (node.id === "announce-text") { node.classList.remove("fresh"); void node.offsetWidth; node.classList.add("fresh"); }
    }
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
    $("nav").replaceChildren(...(shop.nav || []).map((n) => el("span", {class: "nav-item" + (/sale|offers/i.test(n) ? " sale" : ""), text: n})));
    $("products-title").textContent = c.products_title || "Trending now";

    buildSection();

    const cc = c.cart || {};
    cart = (cc.items || []).map((x) => ({name: x.name, price: Number(x.price) || 0, qty: Number(x.qty) || 1, art: x.art, hue: x.hue, variant: x.variant || ""}));
    $("cart-fine").textContent = cc.fine || "";
    renderCart();

    const promo = c.promo || {};
    $("promo-label").textContent = promo.label || "Promo code";
    $("promo-input").placeholder = promo.placeholder || "Enter code";
    buildForm();
    buildDeadline();
    buildLive();
    const ticker = c.ticker;
    if (ticker) {
      $("announce").classList.add("ticker");
      const label = el("span.ticker-label", {text: ticker.label || "News"});
      const text = el("span.ticker-text");
      text.id = "announce-text";
      $("announce").replaceChildren(label, text);
    }
    if (c.carousel && c.carousel.label) {
      $("hero").append(el("span.hero-label", {text: c.carousel.label}));
      $("hero").classList.add("labelled");
    }
    // With a form or a countdown in the bag panel, the bag's list takes only the rows it needs.
    if (c.form || c.deadline) $("cart-items").classList.add("fit");
    $("promo-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      if (c.form) return;  // buildForm's handler answers
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

  function productOf(p) {
    return {name: p.name || p.headline || "", price: Number(p.price) || 0, art: p.art, hue: p.hue, variant: p.variant || ""};
  }

  /** Put a product in the bag; with [config.pick], the first one added is the answer. */
  function addToBag(p, button) {
    if (ctx.result !== "pending" || !window.DynaCU.started || picked) return;
    cart.push({name: p.name, price: p.price, qty: 1, art: p.art, hue: p.hue, variant: p.variant});
    renderCart();
    if (button) button.textContent = "Added";
    const pick = ctx.config.pick;
    if (pick) {
      picked = true;
      ctx.checkAnswer(pick.field || Object.keys(ctx.episode.answers)[0], p.name, pick.failure || "wrong_answer");
    }
  }

  function tileFor(p, showRating) {
    const tile = el("div.tile");
    tile.dataset.name = p.name || "";
    const img = el("div.tile-img");
    const hue = Number.isFinite(Number(p.hue)) ? Number(p.hue) : hueOf(p.name || "");
    img.style.background = `hsl(${hue} 35% 94%)`;
    img.innerHTML = art(p.art || "bag", hue);
    if (p.tag) img.append(el("span.tile-tag", {text: p.tag}));
    const name = el("div.tile-name", {text: p.name || ""});
    const spec = p.spec ? el("div.tile-spec", {text: p.spec}) : null;
    const rating = el("div.tile-rating");
    rating.append(el("span.stars", {text: stars(p.rating)}));
    if (showRating && p.rating !== undefined) rating.append(el("span.rating-num", {text: Number(p.rating).toFixed(1)}));
    rating.append(el("span.reviews", {text: p.reviews ? "(" + p.reviews + ")" : ""}));
    const price = el("div.tile-price");
    price.append(el("span.now", {text: money(p.price || 0)}));
    if (p.was) price.append(el("span.was", {text: money(p.was)}));
    const add = el("button.tile-add", {text: "Add to bag"});
    add.type = "button";
    add.addEventListener("click", () => addToBag(productOf(p), add));
    tile.append(...[img, name, spec, rating, price, add].filter(Boolean));
    return tile;
  }

  function reviewFor(r) {
    const card = el("div.review");
    const top = el("div.review-top");
    top.append(el("span.stars", {text: stars(r.stars === undefined ? 5 : r.stars)}));
    if (r.product) top.append(el("span.review-product", {text: r.product}));
    card.append(top, el("p.review-quote", {text: "\u201c" + (r.quote || "") + "\u201d"}));
    const who = el("div.review-who");
    const avatar = el("span.review-avatar", {text: (r.author || "?").trim()[0].toUpperCase()});
    avatar.style.background = `hsl(${hueOf(r.author || "")} 45% 55%)`;
    const meta = el("div.review-meta");
    meta.append(el("div.review-author", {text: r.author || ""}), el("div.review-sub", {text: r.meta || "Verified buyer"}));
    who.append(avatar, meta);
    card.append(who);
    return card;
  }

  function cardFor(c) {
    const card = el("div.card");
    const hue = Number.isFinite(Number(c.hue)) ? Number(c.hue) : hueOf(c.title || "");
    card.style.background = `linear-gradient(120deg, hsl(${hue} 55% 93%), hsl(${(hue + 25) % 360} 50% 84%))`;
    const text = el("div.card-text");
    if (c.eyebrow) text.append(el("div.card-eyebrow", {text: c.eyebrow}));
    text.append(el("div.card-title", {text: c.title || ""}));
    if (c.meta) text.append(el("div.card-meta", {text: c.meta}));
    if (c.sub) text.append(el("div.card-sub", {text: c.sub}));
    const pic = el("div.card-art");
    pic.innerHTML = art(c.art || "calendar", hue);
    card.append(text, pic);
    return card;
  }

  // ---- the section under the banner: tiles, a product slider or a review slider ---------------
  let section = {kind: "tiles", items: [], per: 4, pages: 1, page: 0, next: 0, interval: 5};

  function buildSection() {
    const c = ctx.config;
    const cfg = c.section || {};
    const kind = cfg.kind || "tiles";
    const items = kind === "reviews" ? (c.reviews || []) : kind === "cards" ? (c.cards || []) : (c.products || []);
    const per = Number(cfg.per_page) || (kind === "reviews" || kind === "cards" ? 2 : 4);
    section = {kind, items, per, showRating: Boolean(cfg.show_rating), page: 0,
      pages: kind === "tiles" ? 1 : Math.max(1, Math.ceil(items.length / per)),
      interval: Number(cfg.interval_s) || 5, next: Number(cfg.interval_s) || 5};
    if (cfg.title) $("products-title").textContent = cfg.title;
    $("tiles").style.gridTemplateColumns = `repeat(${per}, 1fr)`;
    $("tiles").classList.toggle("reviews", kind === "reviews");
    if (kind !== "tiles") {
      const nav = el("span.section-nav");
      const prev = el("button.section-arrow.prev");
      const next = el("button.section-arrow.next");
      prev.type = next.type = "button";
      prev.setAttribute("aria-label", "Previous");
      next.setAttribute("aria-label", "Next");
      prev.addEventListener("click", () => turnSection(-1));
      next.addEventListener("click", () => turnSection(1));
      const dots = el("span.section-dots");
      dots.id = "section-dots";
      nav.append(prev, dots, next);
      $("products-link").replaceWith(nav);
    }
    showSection(0);
  }

  function showSection(page) {
    section.page = page;
    const list = section.kind === "tiles" ? section.items.slice(0, 4) : section.items.slice(page * section.per, (page + 1) * section.per);
    const make = {reviews: reviewFor, cards: cardFor}[section.kind] || ((x) => tileFor(x, section.showRating));
    $("tiles").replaceChildren(...list.map(make));
    const dots = $("section-dots");
    if (dots) {
      dots.replaceChildren(...Array.from({length: section.pages}, (_, i) => el("span", {class: "sdot" + (i === page ? " on" : "")})));
    }
  }

  function turnSection(step) {
    if (ctx.result !== "pending" || !window.DynaCU.started) return;
    section.next = ctx.now() + section.interval;
    showSection(((section.page + step) % section.pages + section.pages) % section.pages);
  }

  function tickSection(t) {
    if (section.kind === "tiles" || section.pages < 2 || t < section.next) return;
    while (section.next <= t) section.next += section.interval;
    showSection((section.page + 1) % section.pages);
  }

  // ---- an answer form, a deadline and a live stream in the corner ------------------------------
  function buildForm() {
    const f = ctx.config.form;
    if (!f) return;
    $("promo-form").classList.add("plain");
    if (f.title) $("promo-form").prepend(el("div.form-title", {text: f.title}));
    $("promo-label").textContent = f.label || "";
    $("promo-input").placeholder = f.placeholder || "";
    $("promo-apply").textContent = f.button || "Send";
    let chosen = null;
    if (f.options) {
      const row = el("div.choices");
      for (const option of f.options) {
        const b = el("button.choice", {text: option});
        b.type = "button";
        b.dataset.value = option;
        b.addEventListener("click", () => {
          if (applied) return;
          chosen = option;
          row.querySelectorAll(".choice").forEach((x) => x.classList.toggle("on", x === b));
        });
        row.append(b);
      }
      $("promo-input").replaceWith(row);
      $("promo-apply").classList.add("wide");
    }
    $("promo-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      if (applied || !window.DynaCU.started || ctx.result !== "pending") return;
      const value = f.options ? chosen : $("promo-input").value;
      if (!value || !String(value).trim()) {
        $("promo-msg").textContent = f.options ? "Choose one first" : "Fill this in first";
        $("promo-msg").className = "promo-msg";
        return;
      }
      applied = true;
      $("promo-apply").disabled = true;
      if (!f.options) $("promo-input").readOnly = true;
      const ok = await ctx.checkAnswer(f.field || Object.keys(ctx.episode.answers)[0], value, f.failure || "wrong_answer");
      $("promo-msg").textContent = ok ? (f.ok || "Done") : (f.bad || "That isn\u2019t right");
      $("promo-msg").className = "promo-msg " + (ok ? "good" : "bad");
    });
  }

  function buildDeadline() {
    const d = ctx.config.deadline;
    if (!d) return;
    const box = el("div.deadline");
    box.append(el("span.deadline-label", {text: d.label || "Your bag is reserved for"}), el("span.deadline-time", {text: ""}));
    box.id = "deadline";
    $("cart-items").before(box);
    $("cart-items").classList.add("short");
    renderDeadline();
  }

  function renderDeadline() {
    const d = ctx.config.deadline;
    if (!d) return;
    const left = Math.max(0, Math.ceil(Number(d.closes_at) - ctx.now()));
    const text = Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
    const node = document.querySelector("#deadline .deadline-time");
    if (node.textContent !== text) node.textContent = text;
    $("deadline").classList.toggle("urgent", left <= 10);
  }

  function buildLive() {
    const l = ctx.config.live;
    if (!l) return;
    document.body.classList.add("has-live");
    const box = el("div", {class: "live " + (l.kind === "assistant" ? "assistant" : "video")});
    box.id = "live";
    const hue = Number.isFinite(Number(l.hue)) ? Number(l.hue) : 210;
    if (l.kind === "assistant") {
      const orb = el("div.orb");
      orb.style.background = `radial-gradient(circle at 35% 35%, hsl(${hue} 90% 75%), hsl(${(hue + 40) % 360} 70% 45%))`;
      const meta = el("div.live-meta");
      meta.append(el("div.live-name", {text: l.name || "Shop assistant"}), el("div.live-state", {text: ""}), el("div.live-title", {text: l.title || ""}));
      box.append(orb, meta);
    } else {
      box.style.background = `linear-gradient(160deg, hsl(${hue} 30% 78%), hsl(${(hue + 30) % 360} 35% 55%))`;
      box.innerHTML = `<svg viewBox="0 0 300 200" class="host" aria-hidden="true">
        <rect x="0" y="120" width="300" height="80" fill="hsl(${hue} 20% 35%)" opacity="0.35"/>
        <path d="M90 200 C92 150 118 132 150 132 C182 132 208 150 210 200 Z" fill="hsl(${(hue + 180) % 360} 40% 40%)"/>
        <rect x="138" y="112" width="24" height="26" fill="#d9a282"/>
        <ellipse cx="150" cy="88" rx="32" ry="38" fill="#e8b896"/>
        <path d="M116 84 C114 46 186 44 184 84 C180 64 160 58 150 58 C138 58 120 64 116 84 Z" fill="#4a3426"/>
        <circle cx="138" cy="86" r="3.4" fill="#2b2b2b"/><circle cx="162" cy="86" r="3.4" fill="#2b2b2b"/>
        <ellipse class="mouth" cx="150" cy="108" rx="9" ry="2.5" fill="#8c3b33"/></svg>`;
      const badge = el("span.live-badge", {text: "LIVE"});
      const viewers = el("span.live-viewers", {text: l.viewers ? l.viewers + " watching" : ""});
      const caption = el("div.live-caption");
      caption.append(el("div.live-name", {text: l.name || ""}), el("div.live-title", {text: l.title || ""}));
      box.append(badge, viewers, caption);
    }
    document.querySelector(".main").append(box);
  }

  function speaking(t) {
    return ctx.audioClips.some((c) => c.t <= t && t < c.t + (Number(c.duration) || 0));
  }

  function tickLive(t) {
    const box = $("live");
    if (!box) return;
    const on = speaking(t);
    box.classList.toggle("speaking", on);
    const mouth = box.querySelector(".mouth");
    if (mouth) mouth.setAttribute("ry", on ? String(2 + Math.abs(Math.sin(t * 13)) * 6) : "2.5");
    const state = box.querySelector(".live-state");
    if (state) {
      const text = on ? "Speaking\u2026" : "Listening";
      if (state.textContent !== text) state.textContent = text;
    }
  }

  function renderCart() {
    const count = cart.reduce((n, x) => n + x.qty, 0);
    $("bag-count").textContent = String(count);
    $("cart-count").textContent = count + (count === 1 ? " item" : " items");
    const items = $("cart-items");
    const shown = cart.slice(0, 3);
    items.replaceChildren(...shown.map((x) => {
      const row = el("div.cart-item");
      const pic = el("div.cart-pic");
      const hue = Number.isFinite(Number(x.hue)) ? Number(x.hue) : hueOf(x.name || "");
      pic.style.background = `hsl(${hue} 35% 94%)`;
      pic.innerHTML = art(x.art || "bag", hue);
      const meta = el("div.cart-meta");
      meta.append(el("div.cart-name", {text: x.name}), el("div.cart-variant", {text: [x.variant, "Qty " + x.qty].filter(Boolean).join("  \u00b7  ")}));
      row.append(pic, meta, el("div.cart-price", {text: money(x.price * x.qty)}));
      return row;
    }));
    if (cart.length > 3) items.append(el("div.cart-more", {text: "+ " + (cart.length - 3) + " more"}));
    if (!cart.length && items.classList.contains("fit")) items.append(el("div.cart-empty", {text: "Your bag is empty"}));
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
      section.next = section.interval;
      c.every(0.1, () => {
        const t = c.now();
        tick(); announce(); tickSection(t); tickLive(t); renderDeadline();
        const d = c.config.deadline;
        if (d && t >= Number(d.closes_at)) c.timeout();
      });
      // Exact changes at the edges of the timeline's windows.
      for (const e of c.timeline) {
        c.at(e.t, () => { tick(); announce(); });
        if (e.until !== null && e.until !== undefined) c.at(e.until, () => { tick(); announce(); });
      }
    },
  });
})();
