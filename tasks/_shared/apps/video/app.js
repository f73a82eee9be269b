/* video: a tutorial-video page (category C). The "video" is an animation driven by the episode
 * clock: a terminal replay (typed commands and their output), slides and burned-in captions.
 * Everything it plays comes from the task's script; the page around it from [config].
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
 *   [config.answer]                         the answer card beside the video
 *   title = "Check your understanding", prompt = "...", submit = "Submit"
 *   fields = [{field = "version", label = "Your answer", placeholder = "..."}]
 *   (default: one field, the task's first answer field)
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
 *   kind = "caption"  show = burned-in caption at the bottom of the picture until `until`
 *   until             on cmd/out lines: the line is erased at that time
 * Lines that scroll out of the terminal, cleared lines and past slides leave the DOM.
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
  function fmtTime(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const mm = h ? String(m).padStart(2, "0") : String(m);
    return (h ? h + ":" : "") + mm + ":" + String(sec).padStart(2, "0");
  }
  function initials(name) {
    const words = String(name || "?").replace(/[^A-Za-z0-9 ]/g, " ").split(/\s+/).filter(Boolean);
    return (words.slice(0, 2).map((w) => w[0]).join("") || "?").toUpperCase();
  }
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
  let chapters = [];
  let lastScene = "";
  let lastTermKey = "";
  let lastOverlayKey = "";
  let submitted = false;

  function videoTime() {
    if (!clock.playing) return clock.base;
    return Math.min(length, clock.base + ctx.now() - clock.since);
  }

  // ---- the timeline, expanded once ------------------------------------------------------------
  function buildTimeline(timeline) {
    const prompt = cfg.prompt || "$";
    const cps = Number(cfg.cps) || 14;
    const sorted = timeline.slice().sort((a, b) => a.t - b.t);
    for (const e of sorted) {
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
        slides.push({t: e.t, end: until, title: e.show || "", bullets: e.bullets || [], code: e.code || "", style: e.style || "content", note: e.note || ""});
      } else if (kind === "caption") {
        captions.push({t: e.t, end: until === null ? e.t + 4 : until, text: e.show || ""});
      }
    }
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
      const win = el("div", "term");
      const bar = el("div", "term-bar");
      bar.append(el("span", "dot r"), el("span", "dot y"), el("span", "dot g"), el("span", "term-title", cfg.terminal_title || "bash"));
      body = el("div", "term-body");
      body.style.fontSize = (Number(cfg.font_px) || 16) + "px";
      win.append(bar, body);
      screen.append(win);
    }
    body.replaceChildren(...lines.map((line) => {
      const row = el("div", "term-line");
      if (line.kind === "cmd") {
        row.append(el("span", "term-prompt", line.prompt), document.createTextNode(" " + line.text));
        if (line.cursor) row.append(el("span", "term-cursor"));
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
    const box = el("div", "slide " + (slide.style === "title" ? "slide-title-card" : "slide-content") + (slide.code ? " has-code" : ""));
    box.append(el("div", "slide-accent"));
    box.append(el("h2", "slide-heading", slide.title));
    if (slide.note) box.append(el("div", "slide-note", slide.note));
    if (slide.bullets.length) {
      const ul = el("ul", "slide-bullets");
      for (const b of slide.bullets) ul.append(el("li", "", b));
      box.append(ul);
    }
    if (slide.code) box.append(el("pre", "slide-code", slide.code));
    box.append(el("div", "slide-footer", cfg.channel || ""));
    screen.append(box);
    lastScene = key;
  }

  function renderCaption(t) {
    const cap = captions.find((c) => c.t <= t && t < c.end);
    let node = $("screen").parentNode.querySelector(".caption");
    if (!cap) { if (node) node.remove(); return; }
    if (!node) { node = el("div", "caption"); $("player").insertBefore(node, $("overlay")); }
    if (node.textContent !== cap.text) node.textContent = cap.text;
  }

  function renderOverlay(t) {
    const overlay = $("overlay");
    const ended = t >= length;
    const key = ended ? "ended" : clock.playing ? "" : "paused";
    if (key === lastOverlayKey) return;
    lastOverlayKey = key;
    overlay.replaceChildren();
    overlay.hidden = !key;
    overlay.className = "overlay " + key;
    if (key === "paused") overlay.append(el("span", "big-play"));
    if (key === "ended") {
      const card = el("div", "end-card");
      card.append(el("span", "channel-avatar big", initials(cfg.channel)), el("div", "end-title", "Thanks for watching"), el("div", "end-sub", cfg.channel || ""));
      overlay.append(card);
    }
  }

  function renderControls(t) {
    const frac = length ? Math.min(1, t / length) : 0;
    $("scrub-played").style.width = (frac * 100).toFixed(3) + "%";
    $("scrub-knob").style.left = (frac * 100).toFixed(3) + "%";
    $("scrub-loaded").style.width = (Math.min(1, (t + 20) / Math.max(length, 1)) * 100).toFixed(2) + "%";
    const text = fmtTime(t) + " / " + fmtTime(length);
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
    const screen = $("screen");
    const slide = slides.find((s) => s.t <= t && t < s.end);
    if (slide) renderSlide(screen, slide);
    else if (termEntries.length) { renderTerminal(screen, t); lastScene = "terminal"; }
    else if (lastScene !== "blank") { screen.replaceChildren(el("div", "blank")); lastScene = "blank"; }
    renderCaption(t);
    renderOverlay(t);
    renderControls(t);
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
    const box = $("answer-fields");
    for (const f of fields) {
      const label = el("label", "answer-label");
      label.append(el("span", "", f.label || "Your answer"));
      const input = el("input", "answer-input");
      input.type = "text";
      input.dataset.field = f.field;
      input.placeholder = f.placeholder || "Type your answer";
      input.spellcheck = false;
      label.append(input);
      box.append(label);
    }
    $("answer-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      if (submitted || !window.DynaCU.started) return;
      const inputs = Array.from(box.querySelectorAll("input"));
      if (inputs.some((i) => !i.value.trim())) {
        $("answer-status").textContent = "Fill in your answer first";
        return;
      }
      submitted = true;
      inputs.forEach((i) => { i.readOnly = true; });
      $("answer-submit").disabled = true;
      $("answer-status").textContent = "Submitting\u2026";
      if (inputs.length === 1) {
        await ctx.checkAnswer(inputs[0].dataset.field, inputs[0].value);
      } else {
        let ok = true;
        for (const i of inputs) ok = (await ctx.matches(i.dataset.field, i.value)) && ok;
        if (ok) ctx.succeed(); else ctx.fail("wrong_answer");
      }
      $("answer-status").textContent = "Answer submitted";
    });
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
    $("desc-text").replaceChildren(...paragraphs.map((p) => el("p", "", p)));
    chapters = (cfg.chapters || []).slice().sort((a, b) => a.t - b.t);
    const marks = $("scrub-marks");
    for (const ch of chapters) {
      if (ch.t <= 0 || ch.t >= length) continue;
      const m = el("span", "scrub-mark");
      m.style.left = (ch.t / length * 100).toFixed(3) + "%";
      marks.append(m);
    }
    $("scrub").classList.toggle("seekable", Boolean(cfg.seekable));
    const list = $("upnext");
    for (const item of (c.up_next || []).slice(0, 5)) {
      const row = el("div", "upnext-item");
      const thumb = el("div", "thumb-img");
      const hue = item.hue !== undefined ? item.hue : hueOf(item.title || "");
      thumb.style.background = "linear-gradient(135deg, hsl(" + hue + " 45% 22%), hsl(" + ((hue + 40) % 360) + " 55% 38%))";
      const glyph = el("div", "thumb-glyph");
      for (let i = 0; i < 3; i++) glyph.append(el("span"));
      thumb.append(glyph, el("span", "thumb-len", item.length || ""));
      const meta = el("div", "upnext-meta");
      meta.append(el("div", "upnext-title", item.title || ""), el("div", "upnext-sub", item.channel || ""), el("div", "upnext-sub", item.views || ""));
      row.append(thumb, meta);
      list.append(row);
    }
  }

  DynaCU.task({
    setup(c) {
      ctx = c;
      cfg = ctx.config.video || {};
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
