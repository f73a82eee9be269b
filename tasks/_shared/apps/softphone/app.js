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
 *                  only field); the first call the agent places decides the episode. Not used
 *                  when the task has a [config.call] or a [config.voicemail_form].
 *
 *   voicemail_form (optional) a form under the audio voicemail's player, e.g. a note or a
 *                  contact to update: {title, button (default "Save"), fields = [{field,
 *                  label, placeholder, value}]}; `value` prefills a field that is not an
 *                  answer (field = "" or absent). Saving checks every answer field at once:
 *                  all right is success, else the form's `failure` (default "wrong_answer").
 *
 *   call           (optional) the live call of the task, played from the script's clips:
 *     direction    "out" (default): connects when the agent places a call; "in": rings at
 *                  ring_at (episode seconds) and is answered with the green Answer button;
 *                  unanswered for ring_s seconds (default 20) it is missed ("timeout")
 *     name, detail who the call is with and the line under the name (caller ID, company)
 *     number_field out: the dialled number must match this answer field, else the episode
 *                  ends as number_failure (default "wrong_answer"); absent: any number connects
 *     participants [{speaker, name, detail, joins}]: the people on the call, by script speaker;
 *                  a tile lights while its speaker talks; joins = true: the tile (and a "joined
 *                  the call" line) appears only when that speaker first talks
 *     panels       [{title, rows = [[label, value], ...], columns = [...]}]: cards in the call
 *                  view (an account, orders...), in the DOM only while the call is connected;
 *                  with `columns` the rows are a table, else label/value pairs
 *     chat         {title, placeholder}: the call's chat (typed answers); shown when a step
 *                  expects "chat"
 *     form         {title, button, fields = [{field, label, placeholder}]}: a form in the call
 *                  view (an address, a booking); shown when a step expects "form"
 *     steps        the call's turns, in order: [{clips, expect, field, window_s, failure,
 *                  ack_clips, end, interdigit_s}]
 *       clips      indices of the script's spoken lines (from 0) that this turn plays when it
 *                  starts, keeping their gaps in the script; these clips play only in the call
 *       expect     "none" (the turn only plays), "key" (one keypad key, e.g. an IVR menu),
 *                  "digits" (keys ended by end = "#" or by a pause of interdigit_s, default 3 s),
 *                  "chat" (a message sent in the call's chat), "form" (the call form saved) or
 *                  "speech" (said aloud: the page records the microphone; `listens = true`)
 *       field      the answer field checked (form: every field of the form); a key is checked
 *                  as "press K", so its answers read accept = ["press K"] (kind "text"): a
 *                  bare digit is in every page source and could not be an answer
 *       window_s   seconds to answer once the turn's clips have ended (default 10); keys,
 *                  messages and the form count from the turn's start (barge-in: a right key
 *                  cuts the menu short), speech from its end; the first answer of a turn is
 *                  its answer (a message sent between turns is not); digits ended by a pause
 *                  are not cut off by the window; past the window the episode is "timeout"
 *       failure    the failure for a wrong answer (default "wrong_answer")
 *       ack_clips  clips played after a right answer, before the next turn (replies)
 *     lead_s       seconds from connecting to the first turn (default 0.6)
 *     The last turn answered right is success. Hanging up during the call ends the episode as
 *     "hung_up" when the task declares that failure, else "timeout". In a call the keypad and
 *     the keyboard's digits send tones, and the number display shows them. The call view
 *     (#call-view) carries data-step (the turn) and data-phase (asking, waiting, checking,
 *     reply, done) for scripted solutions' `when`.
 *
 * Timeline lines with `show` appear as a notification at the top right while active.
 *
 * Voicemail playback: the page schedules the clips itself (autoplayAudio: false) so that the
 * player's pause really pauses. Pausing in the middle of a spoken line rewinds to the start of
 * that line, so resuming replays the line whole (the runtime cannot start a clip part-way).
 * Placing a call pauses the voicemail. The voicemail plays the clips that no call turn uses.
 */
(function () {
  "use strict";

  const {el, clock, Track} = DynaCU.ui;
  const initials = (name) => DynaCU.ui.initials(name, "#");  // a number has no initials

  // ---- icons ------------------------------------------------------------------------------
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
    mic: '<path d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5.3-3a5.3 5.3 0 0 1-10.6 0H5a7 7 0 0 0 6 6.9V21h2v-3.1a7 7 0 0 0 6-6.9z"/>',
    send: '<path d="M3.4 20.4 21 12 3.4 3.6 3.4 10l12.6 2-12.6 2z"/>',
  };
  const icon = DynaCU.ui.icons(ICON_PATHS);

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

  // ---- the app ------------------------------------------------------------------------------
  const ui = {};
  const call = {state: "idle", digits: "", tones: "", label: "", since: 0, placed: false, endTimer: null, connectTimer: null};
  let track = null;
  let flow = null;  // the task's live call ([config.call]), if any
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
    ui.callBtn.addEventListener("click", () => {
      ui.display.focus();  // keys typed next are tones, not a second press of this button
      if (call.state === "ringing") flow.answer();
      else if (call.state === "idle") placeCall(ctx);
      else hangUp(ctx);
    });
    ui.backBtn.addEventListener("click", () => { backspace(); ui.display.focus(); });
    // Typing works wherever the focus is, as in desktop softphones (there is no other text box).
    document.addEventListener("keydown", (e) => {
      if (e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.target.closest && e.target.closest("input, textarea")) return;  // typing in a form
      if (/^[0-9*#]$/.test(e.key)) { e.preventDefault(); press(e.key); }
      else if (e.key === "+") { e.preventDefault(); press("+"); }
      else if (e.key === "Backspace") { e.preventDefault(); backspace(); }
      else if (e.key === "Enter") { e.preventDefault(); if (call.state === "idle") placeCall(ctx); }
      else if (e.key === "Escape") { e.preventDefault(); if (call.state !== "idle") hangUp(ctx); }
    });
  }

  function press(key) {
    if (call.state === "connected" && flow) { flow.tone(key); return; }  // keypad tones (DTMF)
    if (call.state === "calling" || call.state === "connected" || call.state === "ringing") return;
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
    const live = flow && flow.cfg.direction !== "in";
    call.connectTimer = setTimeout(() => {
      if (call.state === "calling") {
        call.state = "connected"; call.since = ctx.now(); renderDialer();
        if (live) flow.connect();
      }
    }, wait * 1000);
    renderDialer();
    if (live) {
      if (call.placed) return;
      call.placed = true;
      const nf = flow.cfg.number_field;
      if (nf) {
        ctx.grade(nf, dialled).then((ok) => {
          if (!ok) { clearTimeout(call.connectTimer); ctx.fail(flow.cfg.number_failure || "wrong_answer"); hangUp(ctx); }
        });
      }
      return;
    }
    if (flow || ctx.config.voicemail_form) return;  // the answer is given elsewhere
    const field = answerField(ctx);
    if (field && !call.placed) {
      call.placed = true;  // the first call the agent places is its answer
      ctx.checkAnswer(field, dialled);
    }
  }

  function hangUp(ctx) {
    clearTimeout(call.connectTimer);
    if (flow && flow.active) flow.hangUp();
    call.ended = call.state === "connected" ? ctx.now() - call.since : 0;
    call.state = "ended";
    renderDialer();
    call.endTimer = setTimeout(resetCall, 2500);
  }

  function resetCall() {
    clearTimeout(call.endTimer);
    call.state = "idle";
    call.digits = "";
    call.tones = "";
    call.label = "";
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
    else if (s === "ringing") { status = "Incoming call"; cls = "busy"; }
    else if (s === "connected") { status = "Connected"; cls = "live"; }
    else if (s === "ended") { status = "Call ended"; cls = "ended"; }
    else if (ui.flash && performance.now() < flashUntil) { status = ui.flash; cls = "warn"; }
    ui.status.className = "call-status " + cls;
    if (!ui.statusText) {
      ui.statusText = el("span");
      ui.status.append(el("span", {class: "dot"}), ui.statusText);
    }
    setText(ui.statusText, status);
    // In a call the display shows the keys pressed (tones), else the number or the caller.
    const shown = call.tones ? call.tones : call.label ? call.label : call.digits ? formatNumber(call.digits) : "";
    ui.display.classList.toggle("empty", !shown);
    ui.display.classList.toggle("long", shown.length > 14);
    setText(ui.display, shown || "Enter a number");
    let timer = "";
    if (s === "connected") timer = clock(t - call.since);
    else if (s === "ended" && call.ended) timer = clock(call.ended);
    else if (s === "calling" || s === "ringing") timer = "Ringing";
    setText(ui.timer, timer);
    const inCall = s === "calling" || s === "connected";
    ui.callBtn.classList.toggle("hangup", inCall);
    ui.callBtn.classList.toggle("ringing", s === "ringing");
    setIcon(ui.callBtn, inCall ? "hangup" : "phone", 28);
    ui.callBtn.setAttribute("aria-label", inCall ? "Hang up" : s === "ringing" ? "Answer" : "Call");
    ui.backBtn.style.visibility = call.digits && s === "idle" && !call.label ? "visible" : "hidden";
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
        const wrap = el("div", {class: "vm-wrap"}, row, player,
          cfg.voicemail_form ? buildVoicemailForm(ctx, cfg.voicemail_form) : null);
        list.append(el("li", {class: "vm-item"}, wrap));
        ui.vmPlay.addEventListener("click", () => {
          if (flow && flow.active) return;  // one audio at a time: the call has it
          track.playing ? track.pause() : track.play();
          renderVoicemail();
        });
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


  // ---- the voicemail form (a note, a contact to update) ------------------------------------
  function buildVoicemailForm(ctx, form) {
    const fields = form.fields || [];
    const inputs = [];
    const box = el("form", {class: "vm-form", attrs: {id: "voicemail-form", autocomplete: "off"}});
    box.append(el("div", {class: "vm-form-title", text: form.title || "Note"}));
    fields.forEach((f, i) => {
      const input = el("input", {attrs: {type: "text", id: "vm-field-" + i, placeholder: f.placeholder || "", spellcheck: "false"}});
      if (f.value) input.value = f.value;
      if (f.field) inputs.push([f.field, input]);
      box.append(el("label", {class: "vm-field"}, el("span", {text: f.label || ""}), input));
    });
    const save = el("button", {class: "vm-save", text: form.button || "Save", attrs: {type: "submit", id: "voicemail-save"}});
    box.append(save);
    box.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (ctx.result !== "pending") return;
      save.disabled = true;
      const oks = await Promise.all(inputs.map(([field, input]) => ctx.grade(field, input.value)));
      if (oks.every(Boolean)) ctx.succeed(); else ctx.fail(form.failure || "wrong_answer");
      save.textContent = "Saved";
    });
    return box;
  }

  // ---- the live call ([config.call]) ---------------------------------------------------------
  /**
   * The task's call: rings in or connects when placed, then plays its turns. Each turn plays its
   * clips, then waits for its answer (a key, digits, a chat message, the call form or speech)
   * for window_s; a right answer plays the turn's reply clips and starts the next turn.
   */
  function makeFlow(ctx, cfg) {
    const clips = ctx.audioClips;
    const steps = cfg.steps || [];
    const expects = new Set(steps.map((s) => s.expect || "none"));
    const f = {cfg, active: false, step: -1, phase: "idle", token: 0, speakingUntil: {}};
    const view = {};
    let digits = "", digitTimer = null, mic = null;

    function tile(speaker) { return view.tiles && view.tiles[speaker]; }

    /** Play clips [i...] keeping their script gaps, from `delay` seconds on; returns the end. */
    function playSeq(indices, delay) {
      if (!indices.length) return ctx.now() + delay;
      const t0 = clips[indices[0]].t;
      let end = ctx.now() + delay;
      for (const i of indices) {
        const c = clips[i];
        const from = ctx.now() + delay + (c.t - t0);
        const until = from + c.duration;
        ctx.playClip(i, from - ctx.now());
        end = Math.max(end, until);
        const who = c.speaker;
        f.speakingUntil[who] = Math.max(f.speakingUntil[who] || 0, until);
        ctx.at(from, () => {
          const p = (cfg.participants || []).find((x) => x.speaker === who);
          if (p && p.joins && !view.joined.has(who)) join(p);
          const node = tile(who);
          if (node) node.classList.add("speaking");
        });
        ctx.at(until, () => {
          const node = tile(who);
          if (node && ctx.now() >= f.speakingUntil[who] - 0.05) node.classList.remove("speaking");
        });
      }
      return end;
    }

    function setPhase(phase) {
      f.phase = phase;
      if (view.root) { view.root.dataset.step = String(f.step); view.root.dataset.phase = phase; }
      if (view.hint) {
        const s = steps[f.step] || {};
        let text = "";
        if (phase === "waiting" || phase === "asking") {
          text = {key: "Use the keypad", digits: "Use the keypad", chat: "Reply in the chat", form: "Fill in the form", speech: "Answer aloud"}[s.expect] || "";
        }
        if (s.expect === "speech" && phase === "waiting") text = "Listening…";
        view.hint.classList.toggle("listening", s.expect === "speech" && phase === "waiting");
        setText(view.hint, text);
      }
    }

    function startStep(k) {
      f.step = k;
      const token = ++f.token;
      if (k >= steps.length) { ctx.succeed(); setPhase("done"); return; }
      const s = steps[k];
      digits = "";
      setPhase("asking");
      const end = playSeq(s.clips || [], 0);
      ctx.at(end, () => {
        if (f.token !== token) return;
        if ((s.expect || "none") === "none") { startStep(k + 1); return; }
        setPhase("waiting");
        const w = s.window_s == null ? 10 : s.window_s;
        ctx.at(ctx.now() + w, () => { if (f.token === token) { f.active = false; ctx.timeout(); } });
      });
    }

    /** The current turn got answer `text`: check it and go on, or end the episode. */
    async function answer(kind, text, k = f.step) {
      const s = steps[k];
      if (!s || (s.expect || "none") !== kind) return;
      if (f.phase !== "asking" && f.phase !== "waiting") return;  // between turns: not an answer
      if (kind === "speech" && f.phase !== "waiting") return;  // talking over the question
      const token = ++f.token;  // closes the turn's window
      setPhase("checking");
      let ok;
      if (kind === "form") {
        const oks = await Promise.all(view.formInputs.map(([field, input]) => ctx.grade(field, input.value)));
        ok = oks.every(Boolean);
      } else if (kind === "speech") {
        ok = (await ctx.gradeSpoken(s.field, text)) === "accepted";
      } else {
        ok = await ctx.grade(s.field, text);
      }
      if (f.token !== token) return;
      if (!ok) { ctx.fail(s.failure || "wrong_answer"); f.active = false; setPhase("done"); return; }
      ctx.stopAudio();  // a right key cuts the menu short, as IVRs do
      const acks = s.ack_clips || [];
      if (k === steps.length - 1) { playSeq(acks, 0.3); ctx.succeed(); setPhase("done"); return; }
      setPhase("reply");
      const end = playSeq(acks, 0.3);
      ctx.at(end + 0.5, () => { if (f.token === token) startStep(k + 1); });
    }

    f.tone = (key) => {
      call.tones = (call.tones + key).slice(-16);
      renderDialer();
      if (!f.active || f.step < 0 || f.phase === "reply" || f.phase === "checking") return;
      const s = steps[f.step];
      if (s.expect === "key") { answer("key", "press " + key); return; }
      if (s.expect !== "digits") return;
      if (key === "#" && (s.end || "#") === "#") { answer("digits", digits); return; }
      digits += key;
      if (s.end === "pause") {
        if (digits.length === 1) f.token++;  // entry has begun: the pause after it decides
        clearTimeout(digitTimer);
        const k = f.step;
        digitTimer = setTimeout(() => { if (f.step === k && ctx.result === "pending") answer("digits", digits, k); }, (s.interdigit_s || 3) * 1000);
      }
    };

    function join(p) {
      view.joined.add(p.speaker);
      view.people.insertBefore(personTile(p), view.people.querySelector("#call-mic"));
      if (view.chatLog) chatLine("system", p.name + " joined the call");
    }

    function personTile(p) {
      const node = el("div", {class: "person", attrs: {"data-speaker": p.speaker}},
        el("div", {class: "person-avatar", text: initials(p.name)}),
        el("div", {class: "person-text"}, el("div", {class: "person-name", text: p.name}), el("div", {class: "person-detail", text: p.detail || ""})),
        el("span", {class: "eq"}, el("i"), el("i"), el("i")));
      const k = (cfg.participants || []).indexOf(p);
      node.querySelector(".person-avatar").style.background = AVATAR_COLORS[(k + 1) % AVATAR_COLORS.length];
      view.tiles[p.speaker] = node;
      return node;
    }

    function chatLine(who, text) {
      const row = who === "system" ? el("div", {class: "chat-sys", text}) :
        el("div", {class: "chat-msg mine"}, el("div", {class: "chat-who", text: "You  ·  " + clock(ctx.now() - call.since)}), el("div", {class: "chat-text", text}));
      view.chatLog.append(row);
      view.chatLog.scrollTop = view.chatLog.scrollHeight;
    }

    /** The call view replaces the inbox while the call is connected. */
    function buildView() {
      const inbox = document.getElementById("inbox");
      const root = el("section", {class: "callview", attrs: {id: "call-view", "aria-label": "Call"}});
      view.root = root;
      view.tiles = {};
      view.joined = new Set();
      view.people = el("div", {class: "people"});
      for (const p of cfg.participants || []) if (!p.joins) view.people.append(personTile(p));
      view.hint = el("span", {class: "call-hint", attrs: {id: "call-hint"}});
      root.append(el("div", {class: "section-head"}, el("h2", {text: cfg.name || "Call"}),
        el("span", {class: "pill live", text: "On call"}), view.hint));
      if (cfg.detail) root.append(el("div", {class: "call-detail", text: cfg.detail}));
      root.append(view.people);
      const body = el("div", {class: "call-body"});
      const side = el("div", {class: "call-side"});
      for (const panel of cfg.panels || []) {
        const card = el("div", {class: "panel"}, el("div", {class: "panel-title", text: panel.title || ""}));
        if (panel.columns) {
          const table = el("table", {class: "panel-table"});
          table.append(el("tr", {}, ...panel.columns.map((c) => el("th", {text: c}))));
          for (const row of panel.rows || []) {
            // Short cells (codes, times, prices) never wrap; long ones (addresses) may.
            table.append(el("tr", {}, ...row.map((c) => el("td", {class: String(c).length <= 12 ? "nw" : "", text: String(c)}))));
          }
          card.append(table);
        } else {
          const dl = el("dl", {class: "panel-rows"});
          for (const [k, v] of panel.rows || []) dl.append(el("dt", {text: k}), el("dd", {text: String(v)}));
          card.append(dl);
        }
        side.append(card);
      }
      if (side.children.length) body.append(side);
      if (expects.has("chat")) {
        const chat = cfg.chat || {};
        view.chatLog = el("div", {class: "chat-log", attrs: {id: "call-chat-log"}});
        const input = el("input", {attrs: {type: "text", id: "call-chat-input", placeholder: chat.placeholder || "Type a message", autocomplete: "off", spellcheck: "false"}});
        const send = el("button", {class: "chat-send", html: icon("send", 20), attrs: {type: "submit", id: "call-chat-send", "aria-label": "Send"}});
        const form = el("form", {class: "chat-form"}, input, send);
        form.addEventListener("submit", (e) => {
          e.preventDefault();
          const text = input.value.trim();
          if (!text || ctx.result !== "pending") return;
          input.value = "";
          chatLine("me", text);
          answer("chat", text);
        });
        body.append(el("div", {class: "chat"}, el("div", {class: "panel-title", text: chat.title || "Call chat"}), view.chatLog, form));
      }
      if (expects.has("form") && cfg.form) {
        const fc = cfg.form;
        view.formInputs = [];
        const form = el("form", {class: "call-form", attrs: {id: "call-form", autocomplete: "off"}},
          el("div", {class: "panel-title", text: fc.title || "Details"}));
        (fc.fields || []).forEach((fd, i) => {
          const input = el("input", {attrs: {type: "text", id: "call-field-" + i, placeholder: fd.placeholder || "", spellcheck: "false"}});
          if (fd.value) input.value = fd.value;
          if (fd.field) view.formInputs.push([fd.field, input]);
          form.append(el("label", {class: "vm-field"}, el("span", {text: fd.label || ""}), input));
        });
        form.append(el("button", {class: "vm-save", text: fc.button || "Save", attrs: {type: "submit", id: "call-form-save"}}));
        form.addEventListener("submit", (e) => { e.preventDefault(); answer("form", ""); });
        body.append(form);
      }
      if (expects.has("speech")) {
        view.meter = el("div", {class: "fill"});
        view.people.append(el("div", {class: "mic", attrs: {id: "call-mic"}}, el("span", {class: "mic-icon", html: icon("mic", 20)}),
          el("div", {class: "person-text"}, el("div", {class: "person-name", text: "You"}), el("div", {class: "meter"}, view.meter))));
      }
      root.append(body);
      inbox.hidden = true;
      inbox.after(root);
    }

    f.connect = async () => {
      f.active = true;
      buildView();
      renderDialer();
      if (expects.has("speech")) {
        mic = await ctx.listen((text) => answer("speech", text));
        ctx.every(0.05, () => { if (view.meter) view.meter.style.width = Math.min(100, mic.level() * 600) + "%"; });
      }
      ctx.at(ctx.now() + (cfg.lead_s == null ? 0.6 : cfg.lead_s), () => { if (f.active) startStep(0); });
    };

    f.ring = () => {
      if (call.state !== "idle") return;
      if (track) { track.pause(); renderVoicemail(); }
      call.state = "ringing";
      call.label = cfg.name || "Unknown caller";
      call.since = ctx.now();
      renderDialer();
      const ringS = cfg.ring_s == null ? 20 : cfg.ring_s;
      ctx.at(ctx.now() + ringS, () => { if (call.state === "ringing") { call.state = "ended"; renderDialer(); ctx.timeout(); } });
    };

    f.answer = () => {
      if (call.state !== "ringing") return;
      call.state = "connected";
      call.since = ctx.now();
      f.connect();
    };

    f.hangUp = () => {
      f.active = false;
      f.token++;
      ctx.stopAudio();
      if (mic) mic.stop();
      if (ctx.result === "pending") {
        if (ctx.episode.failures.includes("hung_up")) ctx.fail("hung_up"); else ctx.timeout();
      }
    };

    return f;
  }

  /** Script clip indices that the call plays (the voicemail leaves them out). */
  function callClips(cfg) {
    const used = new Set();
    for (const s of (cfg.call && cfg.call.steps) || []) for (const i of [...(s.clips || []), ...(s.ack_clips || [])]) used.add(i);
    return used;
  }

  DynaCU.task({
    autoplayAudio: false,
    setup(ctx) {
      const cfg = ctx.config;
      document.title = cfg.app_name || "Phone";
      const inCall = callClips(cfg);
      const clips = ctx.audioClips.map((c, i) => Object.assign({index: i}, c)).filter((c) => !inCall.has(c.index));
      if (clips.length && (cfg.voicemails || []).some((v) => v.audio)) {
        vmStart = Math.max(0, clips[0].t - 0.6);
        const last = clips[clips.length - 1];
        track = new Track(ctx, clips.map((c) => ({index: c.index, at: c.t - vmStart, duration: c.duration})),
          last.t + last.duration - vmStart + 0.8);
      }
      if (cfg.call) flow = makeFlow(ctx, cfg.call);
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
      if (flow && flow.cfg.direction === "in") ctx.at(flow.cfg.ring_at || 0, () => flow.ring());
      ctx.every(0.1, () => { renderDialer(ctx.now()); renderVoicemail(); renderToasts(ctx); });
    },
  });
})();
