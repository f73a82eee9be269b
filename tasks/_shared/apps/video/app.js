/* video: a tutorial-video page (category C). The "video" is an animation driven by the episode
 * clock: a terminal replay (typed commands and their output), slides (bullets, code, a bar chart),
 * a UI demo (an app's settings pages driven by a pointer, with toasts and dialogs) and burned-in
 * captions. Everything it plays comes from the task's script; the page around it from [config].
 *
 * [config]
 *   site = "Clipstack"                      site name in the header
 *   [config.video]
 *   title, channel, subscribers, views, published, likes   the page around the player
 *   description = ["paragraph", ...]        (or one string) under the video
 *   length_s = 40                           total the scrub bar shows (default: duration_s)
 *   terminal_title = "dev@box: ~/app"       the terminal window's title bar
 *   prompt = "dev@box:~/app$"               shell prompt before typed commands
 *   cps = 14                                typing speed, characters per second
 *   rows = 15                               terminal rows; older lines scroll away (leave the DOM)
 *   font_px = 16                            terminal font size
 *   seekable = false                        whether clicking the scrub bar seeks
 *   chapters = [{t = 0, title = "Intro"}]   marks on the scrub bar, name next to the time
 *   [config.video.ui]                       the app a UI demo shows (kind = "ui" lines)
 *   app = "Lumen"                           app name in its header; accent = "#2563eb"
 *   url = "app.lumen.io/settings"           the demo browser's address bar
 *   nav = ["Overview", "Backups"]           sidebar items
 *   cps = 12                                typing speed in text boxes
 *   [[config.video.ui.pages]]               id, nav (sidebar item it highlights), title,
 *                                           subtitle, buttons = ["Save"], rows = [{id, label,
 *                                           value, type = text|choice|toggle|password|badge,
 *                                           options, hint}] (badge: a read-only label)
 *   [config.answer]                         the answer card beside the video
 *   title = "Check your understanding", prompt = "...", submit = "Submit"
 *   fields = [{field = "version", label = "Your answer", placeholder = "..."}]
 *   (default: one field, the task's first answer field); a field with type = "choice" and
 *   options = [...] is a row of buttons (the chosen option's text is the answer); with more
 *   than three fields the card is compact (label beside the box). Several fields: all must be
 *   right, else "wrong_answer".
 *   items = ["A  ...", ...]                 a list shown under the prompt (e.g. steps to order)
 *   closes_at = 45                          wall-clock seconds after the start: a countdown
 *                                           (countdown = "Closes in") and, if nothing was sent
 *                                           by then, the card closes (closed_text) and the
 *                                           episode ends as "timeout"
 *   locked_text = "..."                     the card is locked until the video pauses itself
 *                                           (a kind = "pause" line); it then stays open
 *                                           open_s wall-clock seconds (countdown), after which
 *                                           the episode ends as "timeout"
 *   [[config.up_next]]                      suggestions: title, channel, views, length, hue
 *
 * [[script]] entries (ctx.timeline; t and until are video seconds):
 *   kind = "cmd"      show = command typed after the prompt (at cps); optional prompt, cps,
 *                     out = ["line", {text = "line", color = "ok"}] printed after the command runs,
 *                     out_dt = 0.25 (seconds between output lines)
 *   kind = "out"      show = one output line; color = ok|warn|err|dim|info|bold (default kind)
 *   kind = "clear"    clears the terminal (like Ctrl+L)
 *   kind = "slide"    show = slide title; bullets = [...]; code = "..."; style = "title" for a
 *                     title card; shown until `until` (default: the next slide)
 *                     chart = [{label, value, text}] a bar chart (value sets the height, text
 *                     is written on the bar; default the value); chart_unit under the axis
 *   kind = "caption"  show = burned-in caption at the bottom of the picture until `until`
 *   until             on cmd/out lines: the line is erased at that time
 *   kind = "ui"       page = page id: the UI demo shows that page from t (until `until`, else
 *                     until the next ui line; slides still cover it)
 *   kind = "set"      field = row id, show = its new value at t (text boxes are typed at the
 *                     ui cps; a password row shows one dot a character); the pointer moves there
 *                     (pointer = false: it does not; the row may be on a page not shown)
 *   kind = "click"    target = a button label or nav item ("Done" closes a dialog): the pointer
 *                     clicks it at t
 *   kind = "toast"    show = a notification in the demo app, until `until` (default t + 2.5)
 *   kind = "dialog"   show = title, body, code: a modal in the demo app until `until` (default
 *                     t + 3)
 *   kind = "pause"    the video pauses itself at t and shows `show` (and `note`) over the
 *                     picture; playing on resumes it (see answer.locked_text)
 * Lines that scroll out of the terminal, cleared lines, past slides, toasts and dialogs leave
 * the DOM.
 */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const {el, initials, clock: timeText} = DynaCU.ui;
  function hueOf(text) {
    let h = 0;
    for (const ch of String(text)) h = (h * 31 + ch.charCodeAt(0)) % 360;
    return h;
  }
  const COLORS = ["ok", "warn", "err", "dim", "info", "bold"];

  let ctx = null;
  let cfg = {};          // config.video
  let length = 0;        // seconds on the scrub bar
  let rows = 15;
  const clock = {playing: true, base: 0, since: 0};
  let termEntries = [];  // expanded terminal lines: {t, kind, text, color, prompt, cps, until}
  let slides = [];       // {t, end, title, bullets, code, style}
  let captions = [];     // {t, end, text}
  let uiScenes = [];     // {t, end, page}
  let uiEvents = [];     // set / click / toast / dialog lines, by time
  let pauses = [];       // {t, title, note, done}
  let pauseCard = null;  // the pause line the video is stopped at
  let uiCfg = {};
  let lastUiKey = "";
  let chapters = [];
  let lastScene = "";
  let lastTermKey = "";
  let lastOverlayKey = "";
  let submitted = false;
  let onPause = () => {};       // the answer card's reaction to the video pausing itself
  let answerTick = () => {};    // the answer card's countdown

  function videoTime() {
    if (!clock.playing) return clock.base;
    return Math.min(length, clock.base + ctx.now() - clock.since);
  }

  // ---- the timeline, expanded once ------------------------------------------------------------
  function buildTimeline(timeline) {
    const prompt = cfg.prompt || "$";
    const cps = Number(cfg.cps) || 14;
    for (const e of timeline) {
      const kind = e.kind || "out";
      const until = e.until === null || e.until === undefined ? null : Number(e.until);
      if (kind === "cmd") {
        const speed = Number(e.cps) || cps;
        const text = String(e.show || "");
        termEntries.push({t: e.t, kind: "cmd", text, prompt: e.prompt || prompt, cps: speed, until});
        const done = e.t + text.length / speed + 0.35;
        const dt = Number(e.out_dt) || 0.25;
        (e.out || []).forEach((line, i) => {
          const item = typeof line === "string" ? {text: line} : line;
          termEntries.push({t: done + i * dt, kind: "out", text: String(item.text || ""), color: item.color, until});
        });
      } else if (kind === "out") {
        termEntries.push({t: e.t, kind: "out", text: String(e.show || ""), color: e.color, until});
      } else if (kind === "clear") {
        termEntries.push({t: e.t, kind: "clear"});
      } else if (kind === "slide") {
        slides.push({t: e.t, end: until, title: e.show || "", bullets: e.bullets || [], code: e.code || "", style: e.style || "content", note: e.note || "", chart: e.chart || [], chartUnit: e.chart_unit || ""});
      } else if (kind === "caption") {
        captions.push({t: e.t, end: until === null ? e.t + 4 : until, text: e.show || ""});
      } else if (kind === "ui") {
        uiScenes.push({t: e.t, end: until, page: e.page});
      } else if (kind === "set" || kind === "click" || kind === "toast" || kind === "dialog") {
        const end = until !== null ? until : kind === "toast" ? e.t + 2.5 : kind === "dialog" ? e.t + 3 : null;
        uiEvents.push({t: e.t, end, kind, field: e.field, target: e.target, text: String(e.show || ""), body: e.body || "", code: e.code || "", pointer: e.pointer});
      } else if (kind === "pause") {
        pauses.push({t: e.t, title: e.show || "", note: e.note || "", done: false});
      }
    }
    uiScenes.forEach((u, i) => {
      if (u.end === null) u.end = i + 1 < uiScenes.length ? uiScenes[i + 1].t : Infinity;
    });
    termEntries.sort((a, b) => a.t - b.t);
    slides.forEach((s, i) => {
      if (s.end === null) s.end = i + 1 < slides.length ? slides[i + 1].t : Infinity;
    });
  }

  // ---- the terminal: its lines at time t, a pure function of t ---------------------------------
  function terminalLines(t) {
    let lines = [];
    let next = null;
    for (const e of termEntries) {
      if (e.t > t) { next = e; break; }
      if (e.kind === "clear") { lines = []; continue; }
      if (e.until !== null && e.until !== undefined && e.until <= t) continue;
      if (e.kind === "cmd") {
        const typed = Math.min(e.text.length, Math.floor((t - e.t) * e.cps));
        const doneAt = e.t + e.text.length / e.cps + 0.35;
        lines.push({kind: "cmd", prompt: e.prompt, text: e.text.slice(0, typed), running: t >= doneAt});
      } else {
        lines.push({kind: "out", text: e.text, color: e.color});
      }
    }
    const last = lines[lines.length - 1];
    const nextIsCommand = !next || next.kind === "cmd" || next.kind === "clear";
    if ((!last || last.kind === "out" || last.running) && nextIsCommand) {
      lines.push({kind: "cmd", prompt: (next && next.prompt) || cfg.prompt || "$", text: "", idle: true});
    }
    const active = lines[lines.length - 1];
    if (active && active.kind === "cmd" && !(active.running && !active.idle)) active.cursor = true;
    return lines.slice(-rows);
  }

  function renderTerminal(screen, t) {
    const lines = terminalLines(t);
    const key = JSON.stringify(lines);
    if (lastScene === "terminal" && key === lastTermKey) return;
    lastTermKey = key;
    let body = screen.querySelector(".term-body");
    if (lastScene !== "terminal" || !body) {
      screen.replaceChildren();
      const win = el("div.term");
      const bar = el("div.term-bar");
      bar.append(el("span.dot.r"), el("span.dot.y"), el("span.dot.g"), el("span.term-title", {text: cfg.terminal_title || "bash"}));
      body = el("div.term-body");
      body.style.fontSize = (Number(cfg.font_px) || 16) + "px";
      win.append(bar, body);
      screen.append(win);
    }
    body.replaceChildren(...lines.map((line) => {
      const row = el("div.term-line");
      if (line.kind === "cmd") {
        row.append(el("span.term-prompt", {text: line.prompt}), document.createTextNode(" " + line.text));
        if (line.cursor) row.append(el("span.term-cursor"));
      } else {
        if (COLORS.includes(line.color)) row.classList.add("c-" + line.color);
        row.textContent = line.text || "\u00a0";
      }
      return row;
    }));
  }

  function renderSlide(screen, slide) {
    const key = "slide:" + slide.t;
    if (lastScene === key) return;
    screen.replaceChildren();
    const box = el("div", {class: "slide " + (slide.style === "title" ? "slide-title-card" : "slide-content") + (slide.code ? " has-code" : "")});
    box.append(el("div.slide-accent"));
    box.append(el("h2.slide-heading", {text: slide.title}));
    if (slide.note) box.append(el("div.slide-note", {text: slide.note}));
    if (slide.bullets.length) {
      const ul = el("ul.slide-bullets");
      for (const b of slide.bullets) ul.append(el("li", {text: b}));
      box.append(ul);
    }
    if (slide.code) box.append(el("pre.slide-code", {text: slide.code}));
    if (slide.chart.length) box.append(renderChart(slide.chart, slide.chartUnit));
    box.append(el("div.slide-footer", {text: cfg.channel || ""}));
    screen.append(box);
    lastScene = key;
  }

  function renderChart(bars, unit) {
    const chart = el("div.chart");
    const plot = el("div.chart-plot");
    const max = Math.max(...bars.map((b) => Number(b.value) || 0), 1);
    bars.forEach((b, i) => {
      const col = el("div.chart-col");
      const bar = el("div.chart-bar");
      bar.style.height = Math.max(4, (Number(b.value) || 0) / max * 130).toFixed(1) + "px";
      bar.style.background = "hsl(" + ((210 + i * 47) % 360) + " 55% 48%)";
      col.append(el("div.chart-value", {text: b.text !== undefined ? b.text : b.value}), bar, el("div.chart-label", {text: b.label || ""}));
      plot.append(col);
    });
    chart.append(plot);
    if (unit) chart.append(el("div.chart-unit", {text: unit}));
    return chart;
  }

  // ---- the UI demo: the app's state at time t, a pure function of t -------------------------------
  function uiPage(id) {
    return (uiCfg.pages || []).find((p) => p.id === id) || {id, title: id, rows: []};
  }
  function uiState(t, scene) {
    const page = uiPage(scene.page);
    const values = {};    // every page's rows keep their values while another page is shown
    const rowsById = {};
    for (const p of uiCfg.pages || []) {
      for (const r of p.rows || []) { values[r.id] = r.value === undefined ? "" : String(r.value); rowsById[r.id] = r; }
    }
    const cps = Number(uiCfg.cps) || 12;
    let focus = null, pressed = null, pointer = null, toast = null, dialog = null;
    for (const e of uiEvents) {
      if (e.t - 0.8 > t) break;
      if (e.kind === "click" || (e.kind === "set" && e.pointer !== false)) pointer = e.kind === "set" ? "row:" + e.field : "btn:" + e.target;
      if (e.t > t) break;
      if (e.kind === "set" && e.field in values) {
        const row = rowsById[e.field];
        const typed = !row.type || row.type === "text" || row.type === "password";
        if (typed) {
          const n = Math.min(e.text.length, Math.floor((t - e.t) * cps));
          values[e.field] = e.text.slice(0, n);
          if (t - e.t < e.text.length / cps + 0.6) focus = e.field;
        } else {
          values[e.field] = e.text;
          if (t - e.t < 0.6) focus = e.field;
        }
      } else if (e.kind === "click") {
        if (t - e.t < 0.35) pressed = e.target;
      } else if (e.kind === "toast" && t < e.end) {
        toast = e;
      } else if (e.kind === "dialog" && t < e.end) {
        dialog = e;
      }
    }
    return {page, values, focus, pressed, pointer, toast, dialog};
  }

  function renderUi(screen, t, scene) {
    const st = uiState(t, scene);
    let root = screen.querySelector(".ui");
    if (lastScene !== "ui" || !root) {
      screen.replaceChildren();
      root = el("div.ui");
      if (uiCfg.accent) root.style.setProperty("--ui-accent", uiCfg.accent);
      const chrome = el("div.ui-chrome");
      chrome.append(el("span.dot.r"), el("span.dot.y"), el("span.dot.g"), el("span.ui-url", {text: uiCfg.url || ""}));
      const app = el("div.ui-app");
      root.append(chrome, app, el("div.ui-pointer"));
      screen.append(root);
      lastUiKey = "";
      lastScene = "ui";
    }
    const key = JSON.stringify([st.page.id, st.values, st.focus, st.pressed, st.toast && st.toast.t, st.dialog && st.dialog.t]);
    if (key !== lastUiKey) {
      lastUiKey = key;
      const app = root.querySelector(".ui-app");
      const head = el("div.ui-head");
      head.append(el("span.ui-logo", {text: initials(uiCfg.app)}), el("span.ui-name", {text: uiCfg.app || ""}), el("span.spacer"), el("span.ui-user", {text: "JD"}));
      const side = el("div.ui-side");
      for (const item of uiCfg.nav || []) {
        const n = el("div", {class: "ui-nav" + (item === st.page.nav ? " active" : "") + (st.pressed === item ? " pressed" : ""), text: item});
        n.dataset.target = item;
        side.append(n);
      }
      const main = el("div.ui-main");
      main.append(el("div.ui-title", {text: st.page.title || ""}));
      if (st.page.subtitle) main.append(el("div.ui-subtitle", {text: st.page.subtitle}));
      for (const r of st.page.rows || []) {
        const row = el("div", {class: "ui-row" + (st.focus === r.id ? " focus" : "")});
        row.dataset.row = r.id;
        const label = el("div.ui-label", {text: r.label || r.id});
        if (r.hint) label.append(el("div.ui-hint", {text: r.hint}));
        row.append(label);
        const v = st.values[r.id];
        let ctl;
        if (r.type === "choice") {
          ctl = el("div.ui-seg");
          for (const o of r.options || []) ctl.append(el("span", {class: "ui-opt" + (o === v ? " on" : ""), text: o}));
        } else if (r.type === "toggle") {
          ctl = el("span", {class: "ui-toggle" + (v === "on" ? " on" : "")});
        } else if (r.type === "badge") {
          ctl = el("span.ui-badge", {text: v});
        } else {
          ctl = el("div.ui-input", {text: r.type === "password" ? "\u2022".repeat(v.length) : v});
          if (st.focus === r.id) ctl.append(el("span.ui-caret"));
        }
        ctl.classList.add("ui-ctl");
        row.append(ctl);
        main.append(row);
      }
      if ((st.page.buttons || []).length) {
        const bar = el("div.ui-buttons");
        st.page.buttons.forEach((b, i) => {
          const btn = el("span", {class: "ui-btn" + (i === 0 ? " primary" : "") + (st.pressed === b ? " pressed" : ""), text: b});
          btn.dataset.target = b;
          bar.append(btn);
        });
        main.append(bar);
      }
      const body = el("div.ui-body");
      body.append(side, main);
      const parts = [head, body];
      if (st.dialog) {
        const shade = el("div.ui-shade");
        const box = el("div.ui-dialog");
        box.append(el("div.ui-dialog-title", {text: st.dialog.text}));
        if (st.dialog.body) box.append(el("div.ui-dialog-body", {text: st.dialog.body}));
        if (st.dialog.code) box.append(el("div.ui-dialog-code", {text: st.dialog.code}));
        const close = el("span.ui-btn.primary", {text: "Done"});
        close.dataset.target = "Done";
        const actions = el("div.ui-dialog-actions");
        actions.append(close);
        box.append(actions);
        shade.append(box);
        parts.push(shade);
      }
      if (st.toast) parts.push(el("div.ui-toast", {text: st.toast.text}));
      app.replaceChildren(...parts);
      // Like a real input: while typed into, a value longer than the box shows its end.
      const typed = app.querySelector(".ui-row.focus .ui-input");
      if (typed) typed.scrollLeft = typed.scrollWidth;
    }
    // The pointer glides (CSS transition) to the control it is about to use.
    const pointer = root.querySelector(".ui-pointer");
    let target = null;
    if (st.pointer && st.pointer.startsWith("row:")) {
      const row = root.querySelector('[data-row="' + CSS.escape(st.pointer.slice(4)) + '"] .ui-ctl');
      target = row;
      if (row && row.classList.contains("ui-seg")) {
        const chosen = row.querySelector(".ui-opt.on");
        if (chosen) target = chosen;
      }
    } else if (st.pointer) {
      target = Array.from(root.querySelectorAll("[data-target]")).find((n) => "btn:" + n.dataset.target === st.pointer) || null;
    }
    if (!target && pointer.dataset.pos) return;  // its control is gone (a closed dialog): stay
    const base = root.getBoundingClientRect();
    let x = 560, y = 300;
    if (target) {
      const r = target.getBoundingClientRect();
      x = r.left - base.left + (r.width > 120 ? r.width - 28 : r.width / 2);
      y = r.top - base.top + r.height / 2;
    }
    const pos = x.toFixed(0) + "px," + y.toFixed(0) + "px";
    if (pointer.dataset.pos !== pos) {
      pointer.dataset.pos = pos;
      pointer.style.transform = "translate(" + x.toFixed(0) + "px, " + y.toFixed(0) + "px)";
    }
  }

  function renderCaption(t) {
    const cap = captions.find((c) => c.t <= t && t < c.end);
    let node = $("screen").parentNode.querySelector(".caption");
    if (!cap) { if (node) node.remove(); return; }
    if (!node) { node = el("div.caption"); $("player").insertBefore(node, $("overlay")); }
    if (node.textContent !== cap.text) node.textContent = cap.text;
  }

  function renderOverlay(t) {
    const overlay = $("overlay");
    const ended = t >= length;
    const asking = !clock.playing && pauseCard && clock.base === pauseCard.t;
    const key = ended ? "ended" : clock.playing ? "" : asking ? "asking" : "paused";
    if (key === lastOverlayKey) return;
    lastOverlayKey = key;
    overlay.replaceChildren();
    overlay.hidden = !key;
    overlay.className = "overlay " + key;
    if (key === "paused") overlay.append(el("span.big-play"));
    if (key === "asking") {
      const card = el("div.ask-card");
      card.append(el("div.ask-badge", {text: "Your turn"}), el("div.ask-title", {text: pauseCard.title}));
      if (pauseCard.note) card.append(el("div.ask-note", {text: pauseCard.note}));
      card.append(el("div.ask-hint", {text: "Press play to continue the video"}));
      overlay.append(card);
    }
    if (key === "ended") {
      const card = el("div.end-card");
      card.append(el("span.channel-avatar.big", {text: initials(cfg.channel)}), el("div.end-title", {text: "Thanks for watching"}), el("div.end-sub", {text: cfg.channel || ""}));
      overlay.append(card);
    }
  }

  function renderControls(t) {
    const frac = length ? Math.min(1, t / length) : 0;
    $("scrub-played").style.width = (frac * 100).toFixed(3) + "%";
    $("scrub-knob").style.left = (frac * 100).toFixed(3) + "%";
    $("scrub-loaded").style.width = (Math.min(1, (t + 20) / Math.max(length, 1)) * 100).toFixed(2) + "%";
    const text = timeText(t) + " / " + timeText(length);
    if ($("time").textContent !== text) $("time").textContent = text;
    const playing = clock.playing && t < length;
    const playClass = "ctl play" + (playing ? "" : " paused");
    if ($("play").className !== playClass) {
      $("play").className = playClass;
      $("play").setAttribute("aria-label", playing ? "Pause" : "Play");
    }
    let chapter = "";
    for (const c of chapters) if (c.t <= t) chapter = c.title;
    const chapterText = chapter ? "\u2022 " + chapter : "";
    if ($("chapter").textContent !== chapterText) $("chapter").textContent = chapterText;
  }

  function render() {
    let t = videoTime();
    if (clock.playing && t >= length) { clock.base = length; clock.playing = false; t = length; }
    const due = clock.playing && pauses.find((p) => !p.done && p.t <= t);
    if (due) {
      due.done = true;
      pauseCard = due;
      clock.base = due.t;
      clock.playing = false;
      t = due.t;
      ctx.stopAudio();
      onPause(due);
    }
    const screen = $("screen");
    const slide = slides.find((s) => s.t <= t && t < s.end);
    const scene = uiScenes.find((u) => u.t <= t && t < u.end);
    if (slide) renderSlide(screen, slide);
    else if (scene) renderUi(screen, t, scene);
    else if (termEntries.length) { renderTerminal(screen, t); lastScene = "terminal"; }
    else if (lastScene !== "blank") { screen.replaceChildren(el("div.blank")); lastScene = "blank"; }
    renderCaption(t);
    renderOverlay(t);
    renderControls(t);
    answerTick();
  }

  // ---- playback control -------------------------------------------------------------------------
  function scheduleAudio(from) {
    ctx.audioClips.forEach((clip, i) => {
      if (clip.t >= from - 0.05) ctx.playClip(i, Math.max(0, clip.t - from));
    });
  }
  function togglePlay() {
    if (ctx.result !== "pending" || !window.DynaCU.started) return;
    const t = videoTime();
    if (clock.playing) {
      clock.base = t;
      clock.playing = false;
      ctx.stopAudio();
    } else if (t < length) {
      clock.since = ctx.now();
      clock.playing = true;
      scheduleAudio(t);
    }
    render();
  }
  function seek(event) {
    if (!cfg.seekable || ctx.result !== "pending" || !window.DynaCU.started) return;
    const rect = $("scrub").getBoundingClientRect();
    const t = Math.max(0, Math.min(1, (event.clientX - rect.left) / rect.width)) * length;
    ctx.stopAudio();
    clock.base = t;
    clock.since = ctx.now();
    if (clock.playing && t < length) scheduleAudio(t);
    render();
  }

  // ---- the answer card ---------------------------------------------------------------------------
  function buildAnswer() {
    const a = ctx.config.answer || {};
    const firstField = Object.keys(ctx.episode.answers)[0];
    const fields = a.fields && a.fields.length ? a.fields : [{field: firstField, label: "Your answer"}];
    $("answer-title").textContent = a.title || "Check your understanding";
    $("answer-prompt").textContent = a.prompt || "";
    $("answer-prompt").hidden = !a.prompt;
    $("answer-submit").textContent = a.submit || "Submit";
    if (a.items && a.items.length) {
      const list = el("ol.answer-items");
      for (const item of a.items) list.append(el("li", {text: item}));
      $("answer-prompt").after(list);
    }
    const box = $("answer-fields");
    $("answer-form").classList.toggle("compact", fields.length > 3);
    const controls = [];  // {field, value(), lock()}
    for (const f of fields) {
      const label = el(f.type === "choice" ? "div" : "label", {class: "answer-label"});
      label.append(el("span", {text: f.label || "Your answer"}));
      if (f.type === "choice") {
        const seg = el("div.answer-choice");
        seg.dataset.field = f.field;
        let chosen = "";
        for (const o of f.options || []) {
          const b = el("button.choice", {text: o});
          b.type = "button";
          b.dataset.option = o;
          b.addEventListener("click", () => {
            if (submitted || seg.classList.contains("locked")) return;
            chosen = o;
            seg.querySelectorAll(".choice").forEach((x) => x.classList.toggle("on", x === b));
          });
          seg.append(b);
        }
        label.append(seg);
        controls.push({field: f.field, value: () => chosen, lock: (on) => seg.classList.toggle("locked", on)});
      } else {
        const input = el("input.answer-input");
        input.type = "text";
        input.dataset.field = f.field;
        input.placeholder = f.placeholder || "Type your answer";
        input.spellcheck = false;
        label.append(input);
        controls.push({field: f.field, value: () => input.value, lock: (on) => { input.readOnly = on; }});
      }
      box.append(label);
    }
    const lockAll = (on) => { controls.forEach((c) => c.lock(on)); $("answer-submit").disabled = on; };
    $("answer-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      if (submitted || closed || !window.DynaCU.started || $("answer-form").classList.contains("locked")) return;
      if (controls.some((c) => !c.value().trim())) {
        $("answer-status").textContent = controls.length > 1 ? "Fill in every field first" : "Fill in your answer first";
        return;
      }
      submitted = true;
      lockAll(true);
      $("answer-status").textContent = "Submitting\u2026";
      if (controls.length === 1) {
        await ctx.checkAnswer(controls[0].field, controls[0].value());
      } else {
        let ok = true;
        for (const c of controls) ok = (await ctx.grade(c.field, c.value())) && ok;
        if (ok) ctx.succeed(); else ctx.fail("wrong_answer");
      }
      $("answer-status").textContent = "Answer submitted";
      if (countdown) countdown.remove();
    });

    // Windows: a closing time, or a card locked until the video pauses to ask.
    let countdown = null, closed = false, closesAt = null;
    const close = () => {
      if (submitted || closed) return;
      closed = true;
      lockAll(true);
      countdown.textContent = a.closed_text || "Closed";
      countdown.classList.add("closed");
      ctx.timeout();
    };
    const tick = () => {
      if (!countdown || submitted || closed || closesAt === null) return;
      const left = Math.max(0, Math.ceil(closesAt - ctx.now()));
      const text = (a.countdown || "Closes in") + " " + timeText(left);
      if (countdown.textContent !== text) countdown.textContent = text;
      countdown.classList.toggle("urgent", left <= 10);
      if (ctx.now() >= closesAt) close();
    };
    if (a.closes_at !== undefined || a.locked_text) {
      countdown = el("div.answer-countdown");
      countdown.id = "answer-countdown";
      $("answer-title").after(countdown);
    }
    if (a.closes_at !== undefined) {
      closesAt = Number(a.closes_at);
    } else if (a.locked_text) {
      $("answer-form").classList.add("locked");
      lockAll(true);
      countdown.textContent = a.locked_text;
      onPause = () => {
        if (submitted || closed) return;
        $("answer-form").classList.remove("locked");
        lockAll(false);
        closesAt = ctx.now() + (Number(a.open_s) || 15);
        tick();
      };
    }
    answerTick = tick;
  }

  // ---- the page around the player ---------------------------------------------------------------
  function buildPage() {
    const c = ctx.config;
    document.title = (cfg.title || "Video") + " - " + (c.site || "Clipstack");
    $("site-name").textContent = c.site || "Clipstack";
    $("me-avatar").textContent = "Y";
    $("video-title").textContent = cfg.title || "";
    $("channel-name").textContent = cfg.channel || "";
    $("channel-subs").textContent = cfg.subscribers || "";
    const avatar = $("channel-avatar");
    avatar.textContent = initials(cfg.channel);
    avatar.style.background = "hsl(" + hueOf(cfg.channel || "") + " 55% 42%)";
    $("likes").textContent = cfg.likes || "";
    $("desc-meta").textContent = [cfg.views, cfg.published].filter(Boolean).join("  \u00b7  ");
    const paragraphs = Array.isArray(cfg.description) ? cfg.description : cfg.description ? [cfg.description] : [];
    $("desc-text").replaceChildren(...paragraphs.map((p) => el("p", {text: p})));
    chapters = (cfg.chapters || []).slice().sort((a, b) => a.t - b.t);
    const marks = $("scrub-marks");
    for (const ch of chapters) {
      if (ch.t <= 0 || ch.t >= length) continue;
      const m = el("span.scrub-mark");
      m.style.left = (ch.t / length * 100).toFixed(3) + "%";
      marks.append(m);
    }
    $("scrub").classList.toggle("seekable", Boolean(cfg.seekable));
    const list = $("upnext");
    for (const item of (c.up_next || []).slice(0, 5)) {
      const row = el("div.upnext-item");
      const thumb = el("div.thumb-img");
      const hue = item.hue !== undefined ? item.hue : hueOf(item.title || "");
      thumb.style.background = "linear-gradient(135deg, hsl(" + hue + " 45% 22%), hsl(" + ((hue + 40) % 360) + " 55% 38%))";
      const glyph = el("div.thumb-glyph");
      for (let i = 0; i < 3; i++) glyph.append(el("span"));
      thumb.append(glyph, el("span.thumb-len", {text: item.length || ""}));
      const meta = el("div.upnext-meta");
      meta.append(el("div.upnext-title", {text: item.title || ""}), el("div.upnext-sub", {text: item.channel || ""}), el("div.upnext-sub", {text: item.views || ""}));
      row.append(thumb, meta);
      list.append(row);
    }
  }

  DynaCU.task({
    setup(c) {
      ctx = c;
      cfg = ctx.config.video || {};
      uiCfg = cfg.ui || {};
      length = Number(cfg.length_s) || ctx.episode.duration;
      rows = Number(cfg.rows) || 15;
      buildTimeline(ctx.timeline);
      buildPage();
      buildAnswer();
      $("play").addEventListener("click", togglePlay);
      $("screen").addEventListener("click", togglePlay);
      $("overlay").addEventListener("click", togglePlay);
      $("scrub").addEventListener("click", seek);
      render();
    },
    start(c) {
      clock.since = c.now();
      render();
      c.every(0.05, render);
    },
  });
})();
