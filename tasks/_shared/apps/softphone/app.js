/* Browser softphone app (category G).
 *
 * A web dialer: navigation rail, a dial pad with the number display, call and hang-up buttons,
 * the call status and timer, the voicemail list with a player, and recent calls. Voicemail has
 * no transcription: what is said is only heard. The number the agent dials appears only as the
 * agent enters it.
 *
 * Everything shown comes from the task's [config] and timeline:
 *
 *   app_name       brand in the rail (default "Phone")
 *   user           {name, status, line}: the signed-in user, e.g. status "Available",
 *                  line "Work line" (the "Calling from" label)
 *   voicemails     [{from, caller_id, received, duration, new, unknown, audio}]; the one with
 *                  audio = true plays the script's clips (its length is theirs); the others
 *                  are older messages shown as played; unknown = true: a silhouette, no initials
 *   voicemail_autoplay  start the audio voicemail at its first line (default true)
 *   recents        [{name, detail, when, direction}] with direction in | out | missed
 *   connect_after_s  seconds of ringing before a call connects (default 2)
 *   answer_field   the answer field the dialled number is checked against (default: the task's
 *                  only field); the first call the agent places decides the episode
 *
 * Timeline lines with `show` appear as a notification at the top right while active.
 *
 * Voicemail playback: the page schedules the clips itself (autoplayAudio: false) so that the
 * player's pause really pauses. Pausing in the middle of a spoken line rewinds to the start of
 * that line, so resuming replays the line whole (the runtime cannot start a clip part-way).
 * Placing a call pauses the voicemail.
 */
(function () {
  "use strict";

  // ---- small DOM helpers ------------------------------------------------------------------
  /** Create an element; props: class, text, html (own static markup only), attrs, on. */
  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    const p = props || {};
    if (p.class) node.className = p.class;
    if (p.text !== undefined) node.textContent = p.text;
    if (p.html !== undefined) node.innerHTML = p.html;
    for (const [k, v] of Object.entries(p.attrs || {})) node.setAttribute(k, v);
    for (const [k, v] of Object.entries(p.on || {})) node.addEventListener(k, v);
    for (const c of children) if (c) node.append(c);
    return node;
  }

  const ICON_PATHS = {
    phone: '<path d="M6.6 10.8a15.1 15.1 0 0 0 6.6 6.6l2.2-2.2a1 1 0 0 1 1-.24 11.4 11.4 0 0 0 3.6.57 1 1 0 0 1 1 1V20a1 1 0 0 1-1 1A17 17 0 0 1 3 4a1 1 0 0 1 1-1h3.5a1 1 0 0 1 1 1c0 1.25.2 2.45.57 3.57a1 1 0 0 1-.25 1z"/>',
    hangup: '<path d="M12 9c-1.6 0-3.1.3-4.6.7v3.1c0 .4-.2.8-.6.9-1 .5-1.9 1.1-2.6 1.8a1 1 0 0 1-1.4 0L.3 13a1 1 0 0 1 0-1.4A16.9 16.9 0 0 1 12 7c4.6 0 8.7 1.8 11.7 4.6a1 1 0 0 1 0 1.4l-2.5 2.5a1 1 0 0 1-1.4 0 11 11 0 0 0-2.6-1.8 1 1 0 0 1-.6-.9V9.7C15.1 9.3 13.6 9 12 9z"/>',
    backspace: '<path d="M22 3H7c-.7 0-1.2.4-1.6.9L0 12l5.4 8.1c.4.5.9.9 1.6.9h15a2 2 0 0 0 2-2V5a2 2 0 0 0-2-2zm-3 12.6L17.6 17 14 13.4 10.4 17 9 15.6l3.6-3.6L9 8.4 10.4 7l3.6 3.6L17.6 7 19 8.4 15.4 12z"/>',
    voicemail: '<path d="M18.5 6A5.5 5.5 0 0 0 14.3 15H9.7A5.5 5.5 0 1 0 5.5 17h13a5.5 5.5 0 0 0 0-11zM5.5 15a3.5 3.5 0 1 1 0-7 3.5 3.5 0 0 1 0 7zm13 0a3.5 3.5 0 1 1 0-7 3.5 3.5 0 0 1 0 7z"/>',
    contacts: '<path d="M20 0H4v2h16zM4 24h16v-2H4zM20 4H4a2 2 0 0 0-2 2v12a2 2 0 0 0 2 2h16a2 2 0 0 0 2-2V6a2 2 0 0 0-2-2zm-8 2.8a2.3 2.3 0 1 1 0 4.5 2.3 2.3 0 0 1 0-4.5zM17 17H7v-1.5c0-1.7 3.3-2.5 5-2.5s5 .8 5 2.5z"/>',
    messages: '<path d="M20 2H4a2 2 0 0 0-2 2v18l4-4h14a2 2 0 0 0 2-2V4a2 2 0 0 0-2-2zM6 9h12v2H6zm8 5H6v-2h8zm4-6H6V6h12z"/>',
    history: '<path d="M13 3a9 9 0 0 0-9 9H1l3.9 3.9L9 12H6a7 7 0 1 1 2.1 5l-1.4 1.4A9 9 0 1 0 13 3zm-1 5v5l4.3 2.5.7-1.2-3.5-2.1V8z"/>',
    settings: '<path d="M19.1 12.9a7 7 0 0 0 0-1.8l2-1.6-2-3.4-2.3.9a7 7 0 0 0-1.6-.9L15 3.7h-4l-.3 2.4a7 7 0 0 0-1.6.9l-2.3-.9-2 3.4 2 1.6a7 7 0 0 0 0 1.8l-2 1.6 2 3.4 2.3-.9c.5.4 1 .7 1.6.9l.3 2.4h4l.3-2.4c.6-.2 1.1-.5 1.6-.9l2.3.9 2-3.4zM13 15.5a3.5 3.5 0 1 1 0-7 3.5 3.5 0 0 1 0 7z"/>',
    play: '<path d="M8 5.5v13a1 1 0 0 0 1.5.86l10.2-6.5a1 1 0 0 0 0-1.72L9.5 4.64A1 1 0 0 0 8 5.5z"/>',
    pause: '<rect x="6" y="5" width="4" height="14" rx="1"/><rect x="14" y="5" width="4" height="14" rx="1"/>',
    speaker: '<path d="M3 9v6h4l5 5V4L7 9zm13.5 3A4.5 4.5 0 0 0 14 8v8a4.5 4.5 0 0 0 2.5-4zM14 3.2v2.1a7 7 0 0 1 0 13.4v2.1a9 9 0 0 0 0-17.6z"/>',
    incoming: '<path d="M20 5.4 18.6 4 7 15.6V9H5v10h10v-2H8.4z"/>',
    outgoing: '<path d="M9 5v2h6.6L4 18.6 5.4 20 17 8.4V15h2V5z"/>',
    person: '<path d="M12 12a4 4 0 1 0 0-8 4 4 0 0 0 0 8zm0 2c-2.7 0-8 1.3-8 4v2h16v-2c0-2.7-5.3-4-8-4z"/>',
    missed: '<path d="M19.6 7 12 14.6 6.4 9H11V7H3v8h2v-4.6l7 7 9-9z"/>',
  };

  function icon(name, size = 24) {
    return `<svg viewBox="0 0 24 24" width="${size}" height="${size}" fill="currentColor" aria-hidden="true">${ICON_PATHS[name]}</svg>`;
  }

  /** Set a button's icon only when it changes, so a click in progress keeps its target. */
  function setIcon(node, name, size) {
    if (node.dataset.icon === name) return;
    node.dataset.icon = name;
    node.innerHTML = icon(name, size);
  }

  /** Set text only when it changes. */
  function setText(node, text) {
    if (node.textContent !== text) node.textContent = text;
  }

  function clock(seconds) {
    const s = Math.max(0, Math.floor(seconds + 1e-6));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  function initials(name) {
    const words = String(name || "").split(/\s+/).filter((w) => /^[A-Za-z]/.test(w));
    return words.slice(0, 2).map((w) => w[0].toUpperCase()).join("") || "#";
  }

  /** US numbers as you type: 555-0123, (212) 555-01, (212) 555-0123, +1 (212) 555-0123. */
  function formatNumber(d) {
    if (/[^0-9]/.test(d)) return d;
    let prefix = "", n = d;
    if (n.length === 11 && n[0] === "1") { prefix = "+1 "; n = n.slice(1); }
    if (n.length > 10) return d;
    if (n.length <= 3) return prefix + n;
    if (n.length <= 7) return prefix + n.slice(0, 3) + "-" + n.slice(3);
    return prefix + "(" + n.slice(0, 3) + ") " + n.slice(3, 6) + "-" + n.slice(6);
  }

  const KEYS = [["1", ""], ["2", "ABC"], ["3", "DEF"], ["4", "GHI"], ["5", "JKL"], ["6", "MNO"],
    ["7", "PQRS"], ["8", "TUV"], ["9", "WXYZ"], ["*", ""], ["0", "+"], ["#", ""]];
  const AVATAR_COLORS = ["#0b57d0", "#b3261e", "#146c2e", "#7d5260", "#8c4a00", "#006a6a"];

  // ---- the voicemail clock and its audio ----------------------------------------------------
  /**
   * The position in a recording, which runs only while playing, and the clips scheduled on it.
   * clips: [{index, at, duration}] with `at` in recording seconds.
   */
  class Track {
    constructor(ctx, clips, length) {
      this.ctx = ctx;
      this.clips = clips;
      this.length = length;
      this.pos = 0;
      this.anchor = 0;
      this.playing = false;
      this.started = false;  // played at least once
    }

    position() {
      const p = this.playing ? this.pos + (this.ctx.now() - this.anchor) : this.pos;
      return Math.min(p, this.length);
    }

    /** Start of the clip playing at p, or p itself between clips. */
    lineStart(p) {
      const clip = this.clips.find((c) => c.at < p && p < c.at + c.duration);
      return clip ? clip.at : p;
    }

    play() {
      if (this.playing) return;
      if (this.pos >= this.length - 0.05) this.pos = 0;
      this.anchor = this.ctx.now();
      this.playing = true;
      this.started = true;
      for (const c of this.clips) {
        if (c.at >= this.pos - 1e-3) {
          const src = this.ctx.playClip(c.index, c.at - this.pos);
          // The runtime resumes its AudioContext only when it autoplays; do it here.
          if (src.context.state === "suspended") src.context.resume();
        }
      }
    }

    pause() {
      if (!this.playing) return;
      this.pos = this.lineStart(this.position());
      this.playing = false;
      this.ctx.stopAudio();
    }

    seek(p) {
      const wasPlaying = this.playing;
      if (wasPlaying) { this.playing = false; this.ctx.stopAudio(); }
      this.pos = this.lineStart(Math.max(0, Math.min(p, this.length)));
      if (wasPlaying) this.play();
    }

    update() {
      if (this.playing && this.position() >= this.length) {
        this.playing = false;
        this.pos = this.length;
      }
    }
  }

  // ---- the app ------------------------------------------------------------------------------
  const ui = {};
  const call = {state: "idle", digits: "", since: 0, placed: false, endTimer: null, connectTimer: null};
  let track = null;
  let vmStart = 0;  // script time of the audio voicemail's position 0

  function answerField(ctx) {
    const fields = Object.keys(ctx.episode.answers);
    if (ctx.config.answer_field) return ctx.config.answer_field;
    if (fields.length > 1) throw new Error("softphone: config.answer_field is needed with several answer fields");
    return fields[0] || null;
  }

  function buildRail(cfg) {
    const rail = document.getElementById("rail");
    const user = Object.assign({name: "You", status: "Available"}, cfg.user || {});
    const vms = cfg.voicemails || [];
    const unread = vms.filter((v) => v.new).length;
    const avatar = el("div", {class: "me-avatar", text: initials(user.name)});
    rail.append(
      el("div", {class: "brand"}, el("span", {class: "brand-icon", html: icon("phone", 18)}), el("span", {text: cfg.app_name || "Phone"})),
      el("div", {class: "me"}, avatar,
        el("div", {class: "me-text"}, el("div", {class: "me-name", text: user.name}),
          el("div", {class: "me-status"}, el("span", {class: "dot"}), el("span", {text: user.status})))),
    );
    const nav = el("ul", {class: "nav"});
    const items = [["phone", "Calls", true], ["history", "Recents"], ["voicemail", "Voicemail", false, unread], ["contacts", "Contacts"], ["messages", "Messages"]];
    for (const [name, label, active, badge] of items) {
      nav.append(el("li", {class: active ? "active" : ""}, el("span", {class: "nav-icon", html: icon(name, 20)}), el("span", {text: label}),
        badge ? el("span", {class: "badge", attrs: {id: "vm-badge"}, text: String(badge)}) : null));
    }
    rail.append(nav, el("div", {class: "rail-foot"}, el("span", {class: "nav-icon", html: icon("settings", 20)}), el("span", {text: "Settings"})));
  }

  function buildDialer(ctx, cfg) {
    const box = document.getElementById("dialer");
    const user = cfg.user || {};
    ui.status = el("div", {class: "call-status", attrs: {id: "call-status"}});
    ui.display = el("div", {class: "display", attrs: {id: "dial-display", tabindex: "0", role: "textbox", "aria-label": "Phone number"}});
    ui.timer = el("div", {class: "call-timer", attrs: {id: "call-timer"}});
    const pad = el("div", {class: "keypad"});
    for (const [digit, letters] of KEYS) {
      const key = el("button", {class: "key", attrs: {"data-key": digit, "aria-label": digit}},
        el("span", {class: "digit", text: digit}), el("span", {class: "letters", text: letters}));
      key.addEventListener("click", () => { press(digit); ui.display.focus(); });
      pad.append(key);
    }
    ui.callBtn = el("button", {class: "call-btn", attrs: {id: "call-button", "aria-label": "Call"}});
    ui.backBtn = el("button", {class: "back-btn", html: icon("backspace", 24), attrs: {id: "backspace", "aria-label": "Delete"}});
    box.append(
      el("div", {class: "dialer-head"}, el("h2", {text: "Keypad"}),
        el("span", {class: "line", text: "Calling from: " + (user.line || "Main line")})),
      ui.status,
      ui.display,
      ui.timer,
      pad,
      el("div", {class: "actions"}, el("span"), ui.callBtn, ui.backBtn),
    );
    ui.callBtn.addEventListener("click", () => (call.state === "idle" ? placeCall(ctx) : hangUp(ctx)));
    ui.backBtn.addEventListener("click", () => { backspace(); ui.display.focus(); });
    // Typing works wherever the focus is, as in desktop softphones (there is no other text box).
    document.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (/^[0-9*#]$/.test(e.key)) { e.preventDefault(); press(e.key); }
      else if (e.key === "+") { e.preventDefault(); press("+"); }
      else if (e.key === "Backspace") { e.preventDefault(); backspace(); }
      else if (e.key === "Enter") { e.preventDefault(); if (call.state === "idle") placeCall(ctx); }
      else if (e.key === "Escape") { e.preventDefault(); if (call.state !== "idle") hangUp(ctx); }
    });
  }

  function press(key) {
    if (call.state === "calling" || call.state === "connected") return;  // no tones in this dialer
    if (call.state === "ended") resetCall();
    if (call.digits.length >= 20) return;
    call.digits += key;
    renderDialer();
  }

  function backspace() {
    if (call.state !== "idle") return;
    call.digits = call.digits.slice(0, -1);
    renderDialer();
  }

  function placeCall(ctx) {
    const dialled = call.digits;
    if (!dialled) { flashStatus("Enter a number first"); return; }
    if (track) { track.pause(); renderVoicemail(); }
    call.state = "calling";
    call.since = ctx.now();
    const wait = ctx.config.connect_after_s == null ? 2 : ctx.config.connect_after_s;
    call.connectTimer = setTimeout(() => {
      if (call.state === "calling") { call.state = "connected"; call.since = ctx.now(); renderDialer(); }
    }, wait * 1000);
    renderDialer();
    const field = answerField(ctx);
    if (field && !call.placed) {
      call.placed = true;  // the first call the agent places is its answer
      ctx.checkAnswer(field, dialled);
    }
  }

  function hangUp(ctx) {
    clearTimeout(call.connectTimer);
    call.ended = call.state === "connected" ? ctx.now() - call.since : 0;
    call.state = "ended";
    renderDialer();
    call.endTimer = setTimeout(resetCall, 2500);
  }

  function resetCall() {
    clearTimeout(call.endTimer);
    call.state = "idle";
    call.digits = "";
    renderDialer();
  }

  let flashUntil = 0;
  function flashStatus(text) {
    ui.flash = text;
    flashUntil = performance.now() + 2000;
    renderDialer();
  }

  function renderDialer(now) {
    const t = now === undefined ? (DynaCU.now ? DynaCU.now() : 0) : now;
    const s = call.state;
    let status = "Ready", cls = "ready";
    if (s === "calling") { status = "Calling…"; cls = "busy"; }
    else if (s === "connected") { status = "Connected"; cls = "live"; }
    else if (s === "ended") { status = "Call ended"; cls = "ended"; }
    else if (ui.flash && performance.now() < flashUntil) { status = ui.flash; cls = "warn"; }
    ui.status.className = "call-status " + cls;
    if (!ui.statusText) {
      ui.statusText = el("span");
      ui.status.append(el("span", {class: "dot"}), ui.statusText);
    }
    setText(ui.statusText, status);
    ui.display.classList.toggle("empty", !call.digits);
    ui.display.classList.toggle("long", call.digits.length > 14);
    setText(ui.display, call.digits ? formatNumber(call.digits) : "Enter a number");
    let timer = "";
    if (s === "connected") timer = clock(t - call.since);
    else if (s === "ended" && call.ended) timer = clock(call.ended);
    else if (s === "calling") timer = "Ringing";
    setText(ui.timer, timer);
    const inCall = s === "calling" || s === "connected";
    ui.callBtn.classList.toggle("hangup", inCall);
    setIcon(ui.callBtn, inCall ? "hangup" : "phone", 28);
    ui.callBtn.setAttribute("aria-label", inCall ? "Hang up" : "Call");
    ui.backBtn.style.visibility = call.digits && s === "idle" ? "visible" : "hidden";
  }

  function buildInbox(ctx, cfg) {
    const box = document.getElementById("inbox");
    const vms = cfg.voicemails || [];
    const unread = vms.filter((v) => v.new).length;
    ui.vmHead = el("div", {class: "section-head"}, el("h2", {text: "Voicemail"}),
      unread ? el("span", {class: "pill", attrs: {id: "vm-unread"}, text: unread + " new"}) : null);
    const list = el("ul", {class: "vm-list"});
    vms.forEach((vm, k) => {
      // An unknown caller gets a silhouette instead of initials.
      const avatar = vm.unknown ? el("div", {class: "avatar", html: icon("person", 24)}) : el("div", {class: "avatar", text: initials(vm.from)});
      avatar.style.background = AVATAR_COLORS[k % AVATAR_COLORS.length];
      const isAudio = Boolean(vm.audio) && track !== null;
      const length = isAudio ? clock(track.length) : vm.duration || "";
      const row = el("li", {class: "vm" + (vm.new ? " new" : "") + (isAudio ? " audio" : "")},
        avatar,
        el("div", {class: "vm-text"},
          el("div", {class: "vm-from", text: vm.from || "Unknown"}),
          el("div", {class: "vm-meta", text: [vm.caller_id, vm.received].filter(Boolean).join("  ·  ")})),
        el("div", {class: "vm-len", text: length}),
      );
      if (isAudio) {
        ui.vmRow = row;
        ui.vmPlay = el("button", {class: "vm-play", attrs: {id: "voicemail-play", "aria-label": "Play voicemail"}});
        ui.vmFill = el("div", {class: "fill"});
        ui.vmBar = el("div", {class: "vm-bar", attrs: {id: "voicemail-progress"}}, el("div", {class: "rail"}, ui.vmFill));
        ui.vmTime = el("span", {class: "vm-time"});
        row.append(ui.vmPlay);
        const player = el("div", {class: "vm-player"}, el("span", {class: "vm-speaker", html: icon("speaker", 18)}), ui.vmBar, ui.vmTime);
        const wrap = el("div", {class: "vm-wrap"}, row, player);
        list.append(el("li", {class: "vm-item"}, wrap));
        ui.vmPlay.addEventListener("click", () => { track.playing ? track.pause() : track.play(); renderVoicemail(); });
        ui.vmBar.addEventListener("click", (e) => {
          const r = ui.vmBar.getBoundingClientRect();
          track.seek(((e.clientX - r.left) / r.width) * track.length);
          renderVoicemail();
        });
      } else {
        list.append(el("li", {class: "vm-item"}, row));
      }
    });
    box.append(ui.vmHead, list);

    const recents = cfg.recents || [];
    if (recents.length) {
      box.append(el("div", {class: "section-head second"}, el("h2", {text: "Recent calls"})));
      const rl = el("ul", {class: "recents"});
      for (const r of recents) {
        const dir = ["in", "out", "missed"].includes(r.direction) ? r.direction : "in";
        rl.append(el("li", {class: "recent " + dir},
          el("span", {class: "dir", html: icon(dir === "in" ? "incoming" : dir === "out" ? "outgoing" : "missed", 18)}),
          el("div", {class: "r-text"}, el("div", {class: "r-name", text: r.name || ""}), el("div", {class: "r-detail", text: r.detail || ""})),
          el("div", {class: "r-when", text: r.when || ""})));
      }
      box.append(rl);
    }
  }

  function renderVoicemail() {
    if (!track || !ui.vmRow) return;
    track.update();
    const p = track.position();
    setIcon(ui.vmPlay, track.playing ? "pause" : "play", 22);
    ui.vmPlay.setAttribute("aria-label", track.playing ? "Pause voicemail" : "Play voicemail");
    ui.vmRow.classList.toggle("playing", track.playing);
    if (track.started && !ui.vmHeard) {
      // The audio voicemail has been heard: it no longer counts as new (once).
      ui.vmHeard = true;
      ui.vmRow.classList.remove("new");
      for (const id of ["vm-unread", "vm-badge"]) {
        const node = document.getElementById(id);
        if (!node) continue;
        const left = parseInt(node.textContent, 10) - 1;
        if (left > 0) node.textContent = id === "vm-unread" ? left + " new" : String(left);
        else node.remove();
      }
    }
    ui.vmFill.style.width = ((p / track.length) * 100).toFixed(2) + "%";
    setText(ui.vmTime, clock(p) + " / " + clock(track.length));
  }

  function renderToasts(ctx) {
    const t = ctx.now();
    const active = ctx.timeline.filter((i) => i.show && i.t <= t && (i.until == null || t < i.until)).map((i) => i.show);
    const box = document.getElementById("toasts");
    const key = JSON.stringify(active);
    if (box.dataset.shown === key) return;
    box.dataset.shown = key;  // content exists in the DOM only while it is on screen
    box.replaceChildren(...active.map((text) => el("div", {class: "toast"}, el("span", {class: "toast-icon", html: icon("voicemail", 18)}), el("span", {text}))));
  }

  DynaCU.task({
    autoplayAudio: false,
    setup(ctx) {
      const cfg = ctx.config;
      document.title = cfg.app_name || "Phone";
      const clips = ctx.audioClips;
      if (clips.length && (cfg.voicemails || []).some((v) => v.audio)) {
        vmStart = Math.max(0, clips[0].t - 0.6);
        const last = clips[clips.length - 1];
        track = new Track(ctx, clips.map((c, i) => ({index: i, at: c.t - vmStart, duration: c.duration})),
          last.t + last.duration - vmStart + 0.8);
      }
      buildRail(cfg);
      buildDialer(ctx, cfg);
      buildInbox(ctx, cfg);
      renderDialer(0);
      renderVoicemail();
    },
    start(ctx) {
      if (track && ctx.config.voicemail_autoplay !== false) {
        ctx.at(vmStart, () => { if (!track.started) track.play(); });
      }
      ctx.every(0.1, () => { renderDialer(ctx.now()); renderVoicemail(); renderToasts(ctx); });
    },
  });
})();
