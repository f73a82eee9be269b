/* webform: a customer-account web form with transient UI: toasts, banners, system
 * notifications, download cards, cookie banners, session warnings and a support call.
 *
 * Everything on the page comes from the task: ctx.config builds the page, ctx.timeline drives
 * what comes and goes. The page holds no answer; it checks typed answers with ctx.checkAnswer.
 *
 * [config]
 *   brand        {name, tagline, color}          the company (logo drawn from its initial)
 *   nav          ["Billing", ...]                top navigation; nav_active: index shown current
 *   user         {name, initials}                the signed-in customer
 *   breadcrumb   ["My account", "Move service"]
 *   title, intro                                 the form's heading and lead text
 *   fields       [{...}]                         in order; each either a group heading
 *                  {heading = "Schedule"} or a field {name, label, type = text|email|tel|
 *                  date|select|textarea|checkbox, value, placeholder, options, width =
 *                  full|half|third, required, hint, answer = "FIELD"}. A field with `answer`
 *                  is checked on Submit: all such fields right -> success, else the
 *                  submit.failure (default wrong_answer); submit.tries and .decides change it.
 *   submit       {label, cancel, note, busy_label, busy_s, resubmit, required_text, failure,
 *                 tries, decides}
 *                  busy_s: seconds the button spins when no `on = "submit"` line says when
 *                  the response comes (default 1.0); resubmit: Submit works again after a
 *                  response (default true); tries: wrong submits allowed (default 1), a
 *                  wrong one before the last only plays its `if = "invalid"` lines;
 *                  decides = false: a right submit does not end the episode (it plays its
 *                  `if = "valid"` lines, e.g. a confirmation number to report).
 *   support      {title, text, label, placeholder, button, answer = "FIELD", done_text,
 *                 phone, sending, sent_label, failure}
 *                  the help box; Send (or Enter) checks `answer` with ctx.checkAnswer.
 *   aside        [{title, lines = [...]}]        more cards under the support box
 *   footer       "..."
 *   call         {name, role, initials, status, since_s}   a support call in progress, shown
 *                  on top of the side column; its talk meter moves while a clip plays
 *   screen_reader  true (or a label): a "Screen reader on" badge in the header; the page's
 *                  announcements are then spoken lines (cues), audio only
 *   cues         [{on = "submit"|"send"|a button's then, if = "valid"|"invalid",
 *                 clips = [i, ...], once}]   spoken lines (their index among the script's
 *                  spoken lines sorted by t, from 0) that play when the action happens; their
 *                  script t counts from the action. once (default true): only the first
 *                  time; interrupt: stop what is playing first (as a screen reader
 *                  does). Clips no cue names play at their t from the start.
 *
 * [[script]] lines the page reads (ctx.timeline):
 *   show         the message text; kind = toast (default) | banner | notification (a
 *                system notification, top right: app, title) | download (the browser's
 *                download card, bottom left: title = file name, meta = size line) |
 *                consent (a cookie banner along the bottom) | session (a modal: "your
 *                session ends in m:ss")
 *   title        a toast's bold first line (optional)
 *   tone         error | warning | info | success (default info)
 *   until        when it goes (absent: it stays until closed)
 *   on           "submit", "send" or a button's `then`: t and until count from that user
 *                action (each time it happens); absent: t and until count from the start
 *   if           with on = "submit": "valid" (all checked fields right) or "invalid" only
 *   buttons      [label, ...] buttons on the message (data-action = the label); with
 *                `field`, a click is checked as that answer (a toast's close button counts
 *                as "Dismiss"): wrong -> `failure` (default wrong_answer); right -> the
 *                message goes, undoing its `set`, and the episode succeeds if `decides`
 *   then         a name: a right click plays the lines and cues with `on` = that name
 *                (their t counts from the click)
 *   set          {field = "value"} fields the site changes when the message appears
 *   expire       what its `until` means when no right button was clicked: "timeout" (the
 *                episode ends as timeout; a session shows the signed-out screen) or a
 *                failure name; absent: nothing. A session's signed-out screen says
 *                expired_title and expired_text (defaults: "You've been signed out" ...)
 *   countdown    the text before a live countdown ("Closes in"; a session shows m:ss)
 * Everything here is in the DOM only while it is on screen.
 */
(function () {
  "use strict";
  const {el} = DynaCU.ui;

  const SVG = {
    error: '<svg viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="10" fill="currentColor"/><rect x="11" y="6" width="2" height="8" rx="1" fill="#fff"/><circle cx="12" cy="17" r="1.3" fill="#fff"/></svg>',
    warning: '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 2 1 21h22L12 2z" fill="currentColor"/><rect x="11" y="9" width="2" height="6" rx="1" fill="#fff"/><circle cx="12" cy="18" r="1.2" fill="#fff"/></svg>',
    info: '<svg viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="10" fill="currentColor"/><rect x="11" y="10" width="2" height="8" rx="1" fill="#fff"/><circle cx="12" cy="7" r="1.3" fill="#fff"/></svg>',
    success: '<svg viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="10" fill="currentColor"/><path d="m7 12.5 3.2 3.2L17 9" stroke="#fff" stroke-width="2.2" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>',
    close: '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6 6l12 12M18 6 6 18" stroke="currentColor" stroke-width="2" stroke-linecap="round"/></svg>',
    chat: '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 4h16v11H9l-5 4V4z" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round"/></svg>',
    phone: '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6.6 10.8a15 15 0 0 0 6.6 6.6l2.2-2.2c.3-.3.7-.4 1-.2 1.1.4 2.3.6 3.6.6.6 0 1 .4 1 1V20c0 .6-.4 1-1 1A17 17 0 0 1 3 4c0-.6.4-1 1-1h3.5c.6 0 1 .4 1 1 0 1.3.2 2.5.6 3.6.1.3 0 .7-.2 1l-2.3 2.2z" fill="currentColor"/></svg>',
    lock: '<svg viewBox="0 0 24 24" aria-hidden="true"><rect x="5" y="10" width="14" height="10" rx="2" fill="currentColor"/><path d="M8 10V7a4 4 0 0 1 8 0v3" stroke="currentColor" stroke-width="2" fill="none"/></svg>',
    bell: '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M6 16V11a6 6 0 0 1 12 0v5l2 2H4l2-2z" fill="currentColor"/><circle cx="12" cy="20" r="2" fill="currentColor"/></svg>',
    download: '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 4v11m0 0-4.5-4.5M12 15l4.5-4.5M5 19h14" stroke="currentColor" stroke-width="2" fill="none" stroke-linecap="round" stroke-linejoin="round"/></svg>',
    clock: '<svg viewBox="0 0 24 24" aria-hidden="true"><circle cx="12" cy="12" r="9" stroke="currentColor" stroke-width="2" fill="none"/><path d="M12 7v5l3.5 2" stroke="currentColor" stroke-width="2" fill="none" stroke-linecap="round"/></svg>',
    speaker: '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor"/><path d="M16 8.5a5 5 0 0 1 0 7M18.5 6a8.5 8.5 0 0 1 0 12" stroke="currentColor" stroke-width="1.8" fill="none" stroke-linecap="round"/></svg>',
    chevron: '<svg viewBox="0 0 24 24" aria-hidden="true"><path d="m9 6 6 6-6 6" stroke="currentColor" stroke-width="2" fill="none" stroke-linecap="round"/></svg>',
  };
  const TONES = ["error", "warning", "info", "success"];

  const state = {ctx: null, cfg: null, busy: false, sent: false, wrong: 0, cued: new Set(), inputs: {}};

  // ---- page ---------------------------------------------------------------------------------

  function build(ctx) {
    const cfg = ctx.config;
    const brand = cfg.brand || {name: "Account"};
    document.title = (cfg.title || "Account") + " | " + brand.name;
    if (brand.color) document.documentElement.style.setProperty("--brand", brand.color);
    const app = document.getElementById("app");

    const header = el("header.wf-header", {}, [
      el("div.wf-logo", {}, [
        el("span.wf-logo-mark", {text: brand.name.trim().charAt(0)}),
        el("span.wf-logo-name", {text: brand.name}),
        brand.tagline && el("span.wf-logo-tag", {text: brand.tagline}),
      ]),
      el("nav.wf-nav", {}, (cfg.nav || []).map((item, i) =>
        el("a" + (i === (cfg.nav_active ?? -1) ? ".active" : ""), {href: "#", text: item}))),
      el("div.wf-user", {}, [
        cfg.screen_reader && el("span.wf-reader", {}, [el("span.ico", {html: SVG.speaker}), el("span", {text: cfg.screen_reader === true ? "Screen reader on" : cfg.screen_reader})]),
        el("span.wf-bell", {html: SVG.bell}),
        el("span.wf-avatar", {text: (cfg.user && cfg.user.initials) || "ME"}),
        el("span.wf-user-name", {text: (cfg.user && cfg.user.name) || ""}),
      ]),
    ]);

    const crumbs = el("div.wf-crumbs", {}, []);
    (cfg.breadcrumb || []).forEach((c, i, all) => {
      crumbs.append(el(i === all.length - 1 ? "span.current" : "a", {href: "#", text: c}));
      if (i < all.length - 1) crumbs.append(el("span.sep", {html: SVG.chevron}));
    });

    const form = buildForm(cfg);
    const footer = cfg.footer ? el("footer.wf-footer", {text: cfg.footer}) : null;
    const aside = el("aside.wf-aside", {}, [buildCall(cfg.call), buildSupport(cfg.support), ...(cfg.aside || []).map(buildCard), footer]);
    const main = el("main.wf-main", {}, [el("div.wf-left", {}, [crumbs, form]), aside]);
    const banners = el("div.wf-banners", {id: "banners"});
    const toasts = el("div.wf-toasts", {id: "toasts", role: "status", "aria-live": "polite"});
    const notes = el("div.wf-notes", {id: "notes"});
    const downloads = el("div.wf-downloads", {id: "downloads"});
    const overlay = el("div.wf-overlay", {id: "overlay"});
    app.append(header, banners, main, toasts, notes, downloads, overlay);
  }

  function buildForm(cfg) {
    const submit = cfg.submit || {};
    const grid = el("div.wf-grid", {}, []);
    for (const f of cfg.fields || []) {
      if (f.heading) { grid.append(el("h3.wf-group", {text: f.heading})); continue; }
      grid.append(buildField(f));
    }
    const button = el("button.wf-btn.primary", {type: "submit", id: "submit"}, [
      el("span.spinner"), el("span.label", {text: submit.label || "Submit"}),
    ]);
    const actions = el("div.wf-actions", {}, [
      el("span.wf-secure", {}, [el("span.ico", {html: SVG.lock}), el("span", {text: submit.note || "Your information is sent securely."})]),
      el("div.wf-action-buttons", {}, [
        el("button.wf-btn.ghost", {type: "button", text: submit.cancel || "Cancel"}),
        button,
      ]),
    ]);
    const form = el("form.wf-card.wf-form", {id: "form", novalidate: true, autocomplete: "off"}, [
      el("h1", {text: cfg.title || "Form"}),
      cfg.intro && el("p.wf-intro", {text: cfg.intro}),
      el("div.wf-form-error", {id: "form-error", role: "alert"}),
      grid,
      actions,
    ]);
    form.addEventListener("submit", (e) => { e.preventDefault(); onSubmit(); });
    return form;
  }

  function buildField(f) {
    const id = "f-" + f.name;
    const width = f.width || "full";
    let control;
    if (f.type === "select") {
      control = el("select", {id, name: f.name}, (f.options || []).map((o) =>
        el("option", {value: o, text: o, selected: o === f.value})));
    } else if (f.type === "textarea") {
      control = el("textarea", {id, name: f.name, rows: f.rows || 2, placeholder: f.placeholder || ""});
      control.value = f.value || "";
    } else if (f.type === "checkbox") {
      control = el("input", {id, name: f.name, type: "checkbox", checked: Boolean(f.value)});
      state.inputs[f.name] = {spec: f, control};
      return el("label.wf-field.wf-check.w-" + width, {for: id}, [control, el("span", {text: f.label})]);
    } else {
      control = el("input", {id, name: f.name, type: f.type || "text", placeholder: f.placeholder || "", spellcheck: "false"});
      control.value = f.value || "";
    }
    state.inputs[f.name] = {spec: f, control};
    control.addEventListener("input", () => wrap.classList.remove("invalid"));
    const wrap = el("div.wf-field.w-" + width, {}, [
      el("label", {for: id}, [document.createTextNode(f.label || f.name), f.required ? el("span.req", {text: " *"}) : null]),
      control,
      el("div.wf-hint", {text: f.hint || ""}),
    ]);
    return wrap;
  }

  function buildSupport(s) {
    if (!s) return null;
    const input = el("input", {id: "support-input", type: "text", placeholder: s.placeholder || "", spellcheck: "false", autocomplete: "off"});
    const button = el("button.wf-btn.primary.small", {type: "button", id: "support-send", text: s.button || "Send"});
    button.addEventListener("click", () => send(s));
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); send(s); } });
    return el("section.wf-card.wf-support", {id: "support"}, [
      el("div.wf-support-head", {}, [el("span.ico", {html: SVG.chat}), el("h2", {text: s.title || "Need help?"})]),
      s.text && el("p", {text: s.text}),
      el("label", {for: "support-input", text: s.label || "Message"}),
      el("div.wf-support-row", {}, [input, button]),
      el("div.wf-support-done", {id: "support-done"}),
      s.phone && el("div.wf-support-phone", {}, [el("span.ico", {html: SVG.phone}), el("span", {text: s.phone})]),
    ]);
  }

  function buildCall(call) {
    if (!call) return null;
    return el("section.wf-card.wf-call", {id: "call"}, [
      el("span.wf-call-avatar", {text: call.initials || (call.name || "?").charAt(0)}),
      el("div.wf-call-who", {}, [
        el("strong", {text: call.name || "Support"}),
        el("span", {text: call.role || ""}),
        el("span.wf-call-status", {}, [el("span.dot"), el("span", {text: call.status || "On call"}), el("span.clock", {id: "call-clock"})]),
      ]),
      el("span.wf-call-meter", {id: "call-meter"}, [el("i"), el("i"), el("i"), el("i")]),
      el("span.wf-call-end", {html: SVG.phone, title: "Hang up"}),
    ]);
  }

  function buildCard(card) {
    return el("section.wf-card.wf-info", {}, [
      el("h2", {text: card.title || ""}),
      ...(card.lines || []).map((line) => el("p", {text: line})),
    ]);
  }

  // ---- transient UI -------------------------------------------------------------------------

  /** Put a timeline line on screen; returns a function that takes it off. */
  function present(line) {
    const kind = line.kind || "toast";
    const tone = TONES.includes(line.tone) ? line.tone : "info";
    let node, host = "toasts";
    if (kind === "banner") {
      node = el("div.wf-banner.tone-" + tone, {}, [el("span.ico", {html: SVG[tone]}), el("span", {text: line.show})]);
      host = "banners";
    } else if (kind === "notification") {
      node = el("div.wf-note", {role: "status"}, [
        el("div.wf-note-head", {}, [el("span.wf-note-app", {text: line.app || "Messages"}), el("span.wf-note-when", {text: "now"})]),
        line.title && el("strong", {text: line.title}),
        el("p", {text: line.show}),
      ]);
      host = "notes";
    } else if (kind === "download") {
      node = el("div.wf-download", {role: "status"}, [
        el("span.wf-download-ico", {html: SVG.download}),
        el("div.body", {}, [
          el("strong", {text: line.title || "Download"}),
          line.meta && el("span.meta", {text: line.meta}),
          el("p", {text: line.show}),
        ]),
      ]);
      host = "downloads";
    } else if (kind === "consent") {
      node = el("div.wf-consent", {role: "dialog", "aria-label": line.title || "Cookies"}, [
        el("div.body", {}, [line.title && el("strong", {text: line.title}), el("p", {text: line.show})]),
        el("div.wf-consent-side", {}, [el("div.wf-consent-buttons"), el("div.wf-countdown")]),
      ]);
      host = "overlay";
    } else if (kind === "session") {
      node = el("div.wf-modal-back", {}, [el("div.wf-modal", {role: "alertdialog"}, [
        el("span.wf-modal-ico", {html: SVG.clock}),
        el("h2", {text: line.title || "Your session is about to end"}),
        el("p", {text: line.show}),
        el("div.wf-countdown.big"),
        el("div.wf-modal-buttons"),
      ])]);
      host = "overlay";
    } else {
      return toast(line);
    }
    return mount(line, node, host);
  }

  function toast(line) {
    const tone = TONES.includes(line.tone) ? line.tone : "info";
    const life = line.until != null ? line.until - line.t : null;
    const node = el("div.wf-toast.tone-" + tone, {role: tone === "error" ? "alert" : "status"}, [
      el("span.ico", {html: SVG[tone]}),
      el("div.body", {}, [line.title && el("strong", {text: line.title}), el("p", {text: line.show}),
        line.buttons && el("div.wf-toast-buttons")]),
      el("button.close", {type: "button", "aria-label": "Dismiss", "data-action": "Dismiss", html: SVG.close}),
    ]);
    if (life) {
      const bar = el("div.bar");
      bar.style.animationDuration = life + "s";
      node.append(bar);
    }
    return mount(line, node, "toasts");
  }

  /**
   * Show `node` for `line` in the host element: its buttons, countdown, field changes and
   * expiry. Returns remove(expired): takes it off; expired = its time ran out.
   */
  function mount(line, node, host) {
    const ctx = state.ctx;
    const shownAt = ctx.now();
    let gone = false, timer = null;
    const saved = {};
    for (const [name, value] of Object.entries(line.set || {})) {
      const input = state.inputs[name];
      if (!input) continue;
      saved[name] = input.control.value;
      input.control.value = value;
      input.control.closest(".wf-field").classList.add("changed");
    }
    const remove = (expired) => {
      if (gone) return;
      gone = true;
      if (timer) clearInterval(timer);
      node.classList.add("leaving");
      setTimeout(() => node.remove(), 180);
      if (expired === true && line.expire && ctx.result === "pending") {
        if (line.expire === "timeout") {
          if ((line.kind || "") === "session") signedOut(line);
          ctx.timeout();
        } else ctx.fail(line.expire);
      }
    };
    const clicked = async (label) => {
      if (gone || ctx.result !== "pending") return;
      if (line.field) {
        const ok = await ctx.grade(line.field, label);
        if (!ok) { remove(false); ctx.fail(line.failure || "wrong_answer"); return; }
        for (const [name, value] of Object.entries(saved)) {
          state.inputs[name].control.value = value;
          state.inputs[name].control.closest(".wf-field").classList.remove("changed");
        }
        remove(false);
        if (line.decides) ctx.succeed();
        else if (line.then) trigger(line.then, "valid");
      } else remove(false);
    };
    const row = node.querySelector(".wf-toast-buttons, .wf-consent-buttons, .wf-modal-buttons");
    (line.buttons || []).forEach((label, i, all) => {
      const primary = i === all.length - 1;
      const b = el("button.wf-btn" + (primary ? ".primary" : ".ghost") + ".small", {type: "button", "data-action": label, text: label});
      b.addEventListener("click", () => clicked(label));
      if (row) row.append(b);
    });
    const close = node.querySelector("button.close");
    if (close) close.addEventListener("click", () => (line.field ? clicked("Dismiss") : remove(false)));
    const countdown = node.querySelector(".wf-countdown");
    if (countdown && line.until != null) {
      const life = line.until - line.t;
      const tick = () => {
        const left = Math.max(0, Math.ceil(life - (ctx.now() - shownAt)));
        const text = (line.kind === "session")
          ? Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0")
          : left + " s";
        countdown.textContent = (line.countdown ? line.countdown + " " : "") + text;
      };
      tick();
      timer = setInterval(tick, 250);
    }
    document.getElementById(host).append(node);
    return remove;
  }

  /** The session ran out: the form goes behind a signed-out notice. */
  function signedOut(line) {
    const back = el("div.wf-modal-back", {}, [el("div.wf-modal", {role: "alertdialog"}, [
      el("span.wf-modal-ico", {html: SVG.lock}),
      el("h2", {text: line.expired_title || "You've been signed out"}),
      el("p", {text: line.expired_text || "For your security, we signed you out after a period of inactivity. Changes you didn't submit were not saved."}),
    ])]);
    document.getElementById("overlay").append(back);
  }

  /** Schedule a line at its times, offset by `base` seconds (0: the episode start). */
  function schedule(line, base) {
    const ctx = state.ctx;
    let remove = null;
    ctx.at(base + line.t, () => { remove = present(line); });
    // Taking it off is not tied to the episode still running: a verdict must not freeze it on.
    if (line.until != null) {
      setTimeout(() => { if (remove) remove(true); }, Math.max(0, base + line.until - ctx.now()) * 1000);
    }
  }

  /** A user action happened: play the timeline lines and cues that hang on it. */
  function trigger(name, outcome) {
    const ctx = state.ctx, base = ctx.now();
    for (const line of ctx.timeline) {
      if (line.on === name && line.show && (!line.if || line.if === outcome)) schedule(line, base);
    }
    (ctx.config.cues || []).forEach((cue, i) => {
      if (cue.on !== name || (cue.if && cue.if !== outcome)) return;
      if (cue.once !== false && state.cued.has(i)) return;
      state.cued.add(i);
      if (cue.interrupt) ctx.stopAudio();  // a screen reader cuts off its last announcement
      for (const c of cue.clips || []) speak(c, ctx.audioClips[c].t);
    });
  }

  /** Play spoken clip i in `delay` seconds; the call card's meter moves while it plays. */
  function speak(i, delay) {
    const ctx = state.ctx, clip = ctx.audioClips[i];
    ctx.playClip(i, delay);
    const meter = document.getElementById("call-meter");
    if (!meter) return;
    setTimeout(() => meter.classList.add("talking"), delay * 1000);
    setTimeout(() => meter.classList.remove("talking"), (delay + clip.duration) * 1000);
  }

  // ---- user actions -------------------------------------------------------------------------

  function validate() {
    const missing = [];
    for (const {spec, control} of Object.values(state.inputs)) {
      const empty = spec.type === "checkbox" ? !control.checked : !String(control.value).trim();
      if (spec.required && empty) {
        missing.push(spec.label || spec.name);
        control.closest(".wf-field").classList.add("invalid");
      }
    }
    const box = document.getElementById("form-error");
    box.textContent = missing.length
      ? ((state.cfg.submit || {}).required_text || "Please fill in the required fields: ") + missing.join(", ")
      : "";
    box.classList.toggle("shown", missing.length > 0);
    return missing.length === 0;
  }

  async function onSubmit() {
    const ctx = state.ctx, submit = state.cfg.submit || {};
    if (state.busy || ctx.result !== "pending" || !validate()) return;
    state.busy = true;
    const button = document.getElementById("submit");
    button.classList.add("busy");
    button.disabled = true;
    button.querySelector(".label").textContent = submit.busy_label || "Submitting\u2026";
    const checked = Object.values(state.inputs).filter((i) => i.spec.answer);
    const results = await Promise.all(checked.map((i) => ctx.grade(i.spec.answer, i.control.value)));
    const valid = results.every(Boolean);
    const outcome = valid ? "valid" : "invalid";
    const responses = ctx.timeline
      .filter((l) => l.on === "submit" && l.show && (!l.if || l.if === outcome)).map((l) => l.t);
    const respondIn = responses.length ? Math.min(...responses) : (submit.busy_s ?? 1.0);
    trigger("submit", outcome);
    const done = () => {
      button.classList.remove("busy");
      button.querySelector(".label").textContent = submit.label || "Submit";
      state.busy = false;
      button.disabled = submit.resubmit === false;
    };
    setTimeout(done, respondIn * 1000);
    if (!checked.length) return;
    if (valid) {
      if (submit.decides !== false) ctx.succeed();
    } else {
      state.wrong += 1;
      if (state.wrong >= (submit.tries ?? 1)) ctx.fail(submit.failure || "wrong_answer");
    }
  }

  async function send(s) {
    const input = document.getElementById("support-input");
    const text = input.value.trim();
    if (!text || state.sent) return;
    state.sent = true;
    input.disabled = true;
    const button = document.getElementById("support-send");
    button.disabled = true;
    button.textContent = s.sending || "Sending\u2026";
    trigger("send");
    if (s.answer) await state.ctx.checkAnswer(s.answer, text, s.failure || "wrong_answer");
    button.textContent = s.sent_label || "Sent";
    const done = document.getElementById("support-done");
    done.textContent = s.done_text || "Thanks. Our team will look into it.";
    done.classList.add("shown");
  }

  DynaCU.task({
    setup(ctx) {
      state.ctx = ctx;
      state.cfg = ctx.config;
      build(ctx);
    },
    autoplayAudio: false,  // clips a cue names wait for their action; the rest play at t
    start(ctx) {
      for (const line of ctx.timeline) if (!line.on && line.show) schedule(line, 0);
      const cued = new Set((ctx.config.cues || []).flatMap((c) => c.clips || []));
      ctx.audioClips.forEach((clip, i) => { if (!cued.has(i)) speak(i, clip.t); });
      const clock = document.getElementById("call-clock");
      if (clock) {
        const since = (ctx.config.call && ctx.config.call.since_s) || 0;
        const tick = () => {
          const s = Math.floor(since + ctx.now());
          clock.textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
        };
        tick();
        setInterval(tick, 500);
      }
    },
  });
})();
