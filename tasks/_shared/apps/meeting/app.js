/* Video-call app (category B).
 *
 * A browser meeting in progress: top bar, a shared presentation with the participant tiles
 * beside it (or a tile grid when nobody presents), the call controls, and the in-call chat.
 * The active speaker's tile lights up while their clip plays. There are no captions: what is
 * said is only heard.
 *
 * Everything shown comes from the task's [config] and timeline:
 *
 *   title          meeting title (top bar)            meeting_code  e.g. "kdt-qmpx-ruv"
 *   clock          time of day at t = 0, "HH:MM" 24 h (default "10:00"); the page's clocks run on
 *   recording      show the REC badge (default false)
 *   deck           presentation name (slide footer)   slide_count   total slides in the deck
 *   presenter      speaker key of who presents (the "... is presenting" label; default: the
 *                  first participant)
 *   participants   [{speaker, name, role, color, camera, skin, hair, shirt, wall, muted}]:
 *                  speaker is the script's speaker key; camera = true draws a webcam picture,
 *                  otherwise an avatar with initials in `color`
 *   self           {name, color, camera} the agent's own tile (default "You", camera off)
 *   chat_history   [{from, text, time}] messages already in the chat at t = 0
 *   chat_placeholder  the chat box's placeholder (default "Send a message")
 *   answer_field   the answer field a chat message is checked against (default: the task's only
 *                  field); the first message the agent sends decides the episode
 *
 * Timeline lines:
 *   slides  any of slide_title, bullets (list), show (body text), slide (number); the slide is
 *           shown from t until `until` or the next slide. No active slide: nobody presents.
 *   chat    chat = "text", from = "Name": a message that arrives at t and stays in the chat.
 *
 * Audio plays at the script's times (the runtime schedules it). Leaving the call stops it;
 * rejoining picks up the lines that have not started yet, as a real call would.
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
    mic: '<path d="M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.9V21h2v-3.1a7 7 0 0 0 6-6.9z"/>',
    micOff: '<path d="M19 11h-1.7c0 .7-.2 1.4-.4 2l1.2 1.2c.6-.9.9-2 .9-3.2zm-4 .2V5a3 3 0 0 0-6-.2zM4.3 3 3 4.3l6 6V11a3 3 0 0 0 4.3 2.7l1.6 1.6A5 5 0 0 1 7 11H5a7 7 0 0 0 6 6.9V21h2v-3.1c1-.1 1.9-.5 2.7-1L19.7 21 21 19.7z"/>',
    cam: '<path d="M17 10.5V7a1 1 0 0 0-1-1H4a1 1 0 0 0-1 1v10a1 1 0 0 0 1 1h12a1 1 0 0 0 1-1v-3.5l4 4v-11z"/>',
    camOff: '<path d="M21 6.5l-4 4V7a1 1 0 0 0-1-1H9.8L21 17.2zM3.3 2 2 3.3 4.7 6H4a1 1 0 0 0-1 1v10a1 1 0 0 0 1 1h12c.2 0 .4-.1.5-.2l3.2 3.2 1.3-1.3z"/>',
    hand: '<path d="M21 7a1.5 1.5 0 0 0-3 0v5h-1V4a1.5 1.5 0 0 0-3 0v7h-1V2.5a1.5 1.5 0 0 0-3 0V11H9V5a1.5 1.5 0 0 0-3 0v9.5L3.8 12a1.6 1.6 0 0 0-2.3 2.2L7 21.1A4 4 0 0 0 10 22.5h6a5 5 0 0 0 5-5z"/>',
    present: '<path d="M20 3H4a2 2 0 0 0-2 2v11a2 2 0 0 0 2 2h6v2H8v2h8v-2h-2v-2h6a2 2 0 0 0 2-2V5a2 2 0 0 0-2-2zm0 13H4V5h16zM12 6.5l-4 4h3V14h2v-3.5h3z"/>',
    emoji: '<path d="M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 18a8 8 0 1 1 0-16 8 8 0 0 1 0 16zm-3.5-9a1.5 1.5 0 1 0 0-3 1.5 1.5 0 0 0 0 3zm7 0a1.5 1.5 0 1 0 0-3 1.5 1.5 0 0 0 0 3zM12 17.5a5.5 5.5 0 0 0 5.1-3.5H6.9a5.5 5.5 0 0 0 5.1 3.5z"/>',
    more: '<circle cx="12" cy="5" r="2"/><circle cx="12" cy="12" r="2"/><circle cx="12" cy="19" r="2"/>',
    leave: '<path d="M12 9c-1.6 0-3.1.3-4.6.7v3.1c0 .4-.2.8-.6.9-1 .5-1.9 1.1-2.6 1.8a1 1 0 0 1-1.4 0L.3 13a1 1 0 0 1 0-1.4A16.9 16.9 0 0 1 12 7c4.6 0 8.7 1.8 11.7 4.6a1 1 0 0 1 0 1.4l-2.5 2.5a1 1 0 0 1-1.4 0 11 11 0 0 0-2.6-1.8 1 1 0 0 1-.6-.9V9.7C15.1 9.3 13.6 9 12 9z"/>',
    info: '<path d="M11 7h2v2h-2zm0 4h2v6h-2zm1-9a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 18a8 8 0 1 1 0-16 8 8 0 0 1 0 16z"/>',
    people: '<path d="M16 11a3 3 0 1 0 0-6 3 3 0 0 0 0 6zm-8 0a3 3 0 1 0 0-6 3 3 0 0 0 0 6zm0 2c-2.3 0-7 1.2-7 3.5V19h14v-2.5C15 14.2 10.3 13 8 13zm8 0h-1c1.2.8 2 2 2 3.5V19h6v-2.5c0-2.3-4.7-3.5-7-3.5z"/>',
    chat: '<path d="M20 2H4a2 2 0 0 0-2 2v18l4-4h14a2 2 0 0 0 2-2V4a2 2 0 0 0-2-2zm0 14H5.2L4 17.2V4h16zM7 9h10v2H7zm0-3h10v2H7zm0 6h7v2H7z"/>',
    shapes: '<path d="M11 13.5v8H3v-8zM12 2l5.5 9h-11zm5.5 11a4.5 4.5 0 1 1 0 9 4.5 4.5 0 0 1 0-9z"/>',
    send: '<path d="M2 21 23 12 2 3v7l15 2-15 2z"/>',
    close: '<path d="M19 6.4 17.6 5 12 10.6 6.4 5 5 6.4 10.6 12 5 17.6 6.4 19 12 13.4 17.6 19 19 17.6 13.4 12z"/>',
    lock: '<path d="M18 8h-1V6a5 5 0 0 0-10 0v2H6a2 2 0 0 0-2 2v10a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V10a2 2 0 0 0-2-2zm-6 9a2 2 0 1 1 0-4 2 2 0 0 1 0 4zm3.1-9H8.9V6a3.1 3.1 0 0 1 6.2 0z"/>',
    pin: '<path d="M16 9V4h1V2H7v2h1v5c0 1.7-1.3 3-3 3v2h6v7l1 1 1-1v-7h6v-2c-1.7 0-3-1.3-3-3z"/>',
  };

  function icon(name, size = 24) {
    return `<svg viewBox="0 0 24 24" width="${size}" height="${size}" fill="currentColor" aria-hidden="true">${ICON_PATHS[name]}</svg>`;
  }

  function initials(name) {
    return String(name || "?").split(/\s+/).filter(Boolean).slice(0, 2).map((w) => w[0].toUpperCase()).join("");
  }

  const AVATAR_COLORS = ["#1a73e8", "#e8710a", "#188038", "#a142f4", "#d93025", "#12b5cb", "#c5221f", "#5f6368"];
  const SKINS = ["#f1c7a5", "#d9a07a", "#a8704a", "#7a4a2a", "#e8b896"];
  const HAIRS = ["#2b1d14", "#5a3825", "#111111", "#8d5a2b", "#c9a36a"];
  const SHIRTS = ["#35618f", "#7b3f61", "#2f6b4f", "#4a4a58", "#9a5b2f"];
  const WALLS = ["#5d6b78", "#7d6e5f", "#5b6e62", "#6b5f74", "#70757c"];

  /** A webcam picture: a person in front of a wall, drawn in SVG from the participant's colours. */
  function webcam(p, k) {
    const skin = p.skin || SKINS[k % SKINS.length];
    const hair = p.hair || HAIRS[k % HAIRS.length];
    const shirt = p.shirt || SHIRTS[k % SHIRTS.length];
    const wall = p.wall || WALLS[k % WALLS.length];
    const svg = el("div", {class: "cam-feed", html:
      '<svg viewBox="0 0 160 90" preserveAspectRatio="xMidYMid slice" aria-hidden="true">' +
      '<rect class="wall" width="160" height="90"/>' +
      '<rect x="112" y="10" width="34" height="26" rx="1.5" fill="#fff" fill-opacity=".10"/>' +
      '<rect x="108" y="52" width="44" height="3" fill="#000" fill-opacity=".18"/>' +
      '<rect x="16" y="30" width="9" height="13" rx="1" fill="#000" fill-opacity=".16"/>' +
      '<circle cx="20.5" cy="26" r="7" fill="#3f7a4a" fill-opacity=".7"/>' +
      '<g class="person">' +
      '<path class="shirt" d="M44 90c2-19 16-28 36-28s34 9 36 28z"/>' +
      '<rect class="neck" x="73" y="47" width="14" height="16" rx="5"/>' +
      '<ellipse class="skin" cx="80" cy="37" rx="14.5" ry="17.5"/>' +
      '<path class="hair" d="M65 38c-3-17 8-24 15-24s19 5 15 24c-1-8-5-13-15-13s-14 5-15 13z"/>' +
      "</g></svg>"});
    svg.querySelector(".wall").setAttribute("fill", wall);
    svg.querySelector(".shirt").setAttribute("fill", shirt);
    svg.querySelector(".neck").setAttribute("fill", skin);
    svg.querySelector(".neck").setAttribute("style", "filter: brightness(.9)");
    svg.querySelector(".skin").setAttribute("fill", skin);
    svg.querySelector(".hair").setAttribute("fill", hair);
    return svg;
  }

  // ---- clock --------------------------------------------------------------------------------
  function clockBase(cfg) {
    const m = /^(\d{1,2}):(\d{2})$/.exec(String(cfg.clock || "10:00"));
    return m ? (parseInt(m[1], 10) * 60 + parseInt(m[2], 10)) * 60 : 36000;
  }

  function timeOfDay(seconds) {
    const mins = Math.floor(seconds / 60) % (24 * 60);
    const h = Math.floor(mins / 60), m = mins % 60;
    return `${((h + 11) % 12) + 1}:${String(m).padStart(2, "0")} ${h < 12 ? "AM" : "PM"}`;
  }

  // ---- the app ------------------------------------------------------------------------------
  const ui = {tiles: {}, speaking: {}};
  let state = {left: false, mic: false, cam: false, hand: false, chatOpen: true, sent: false};

  function answerField(ctx) {
    const fields = Object.keys(ctx.episode.answers);
    if (ctx.config.answer_field) return ctx.config.answer_field;
    if (fields.length > 1) throw new Error("meeting: config.answer_field is needed with several answer fields");
    return fields[0] || null;
  }

  function buildTopbar(cfg) {
    const bar = document.getElementById("topbar");
    const right = el("div", {class: "top-right"});
    if (cfg.recording) right.append(el("span", {class: "rec"}, el("span", {class: "rec-dot"}), el("span", {text: "REC"})));
    ui.count = el("span", {class: "count"});
    right.append(el("span", {class: "people-count", html: icon("people", 18)}, ui.count));
    bar.append(
      el("div", {class: "top-left"},
        el("span", {class: "lock", html: icon("lock", 16)}),
        el("span", {class: "meeting-title", text: cfg.title || "Meeting"})),
      right,
    );
  }

  function buildTiles(ctx, cfg) {
    const box = document.getElementById("tiles");
    const people = (cfg.participants || []).slice();
    const self = Object.assign({name: "You", camera: false, muted: true, self: true}, cfg.self || {});
    people.push(self);
    people.forEach((p, k) => {
      const color = p.color || AVATAR_COLORS[k % AVATAR_COLORS.length];
      const avatar = el("div", {class: "avatar", text: p.initials || initials(p.name)});
      avatar.style.background = color;
      const feed = p.camera ? webcam(p, k) : null;
      const micIcon = el("span", {class: "tag-mic", html: icon(p.muted ? "micOff" : "mic", 14)});
      const bars = el("span", {class: "bars"}, el("i"), el("i"), el("i"));
      const label = p.self ? (p.name === "You" ? "You" : p.name + " (You)") : p.name + (p.role ? " · " + p.role : "");
      const tile = el("div", {class: "tile" + (p.camera ? " has-cam" : ""), attrs: {"data-speaker": p.speaker || ""}},
        el("div", {class: "avatar-wrap"}, avatar),
        feed,
        el("div", {class: "nametag"}, el("span", {class: "tag-name", text: label})),
        el("div", {class: "tile-mic"}, micIcon, bars),
        el("span", {class: "hand-badge", html: icon("hand", 16)}),
      );
      box.append(tile);
      if (p.self) ui.selfTile = {tile, micIcon, feed, avatarWrap: tile.querySelector(".avatar-wrap"), p, k};
      else if (p.speaker) ui.tiles[p.speaker] = tile;
    });
    ui.count.textContent = String(people.length);
  }

  function buildShare(cfg) {
    const share = document.getElementById("share");
    const people = cfg.participants || [];
    const presenter = (cfg.presenter && people.find((p) => p.speaker === cfg.presenter)) || people[0];
    ui.presenting = el("div", {class: "presenting-label"},
      el("span", {html: icon("present", 16)}),
      el("span", {text: (presenter ? presenter.name : "Someone") + " is presenting"}));
    ui.slide = el("div", {class: "slide"});
    share.append(ui.presenting, ui.slide);
  }

  /** The slide active at time t, or null. */
  function activeSlide(ctx, t) {
    let current = null;
    for (const item of ctx.timeline) {
      if (item.chat !== undefined) continue;
      if (!(item.slide_title || item.bullets || item.show || item.slide !== undefined)) continue;
      if (item.t <= t && (item.until == null || t < item.until)) current = item;
    }
    return current;
  }

  function renderSlide(ctx, item) {
    const cfg = ctx.config;
    const stage = document.getElementById("stage");
    stage.classList.toggle("presenting", Boolean(item));
    if (ui.slideItem === item) return;
    ui.slideItem = item;
    ui.slide.replaceChildren();
    if (!item) return;
    const body = el("div", {class: "slide-body"});
    if (item.slide_title) body.append(el("h2", {text: item.slide_title}));
    if (item.show) body.append(el("p", {class: "slide-text", text: item.show}));
    if (Array.isArray(item.bullets) && item.bullets.length) {
      body.append(el("ul", {}, ...item.bullets.map((b) => el("li", {text: String(b)}))));
    }
    const page = item.slide !== undefined ? String(item.slide) + (cfg.slide_count ? " / " + cfg.slide_count : "") : "";
    ui.slide.append(
      el("div", {class: "slide-band"}),
      body,
      el("div", {class: "slide-foot"}, el("span", {text: cfg.deck || ""}), el("span", {text: page})),
    );
  }

  function buildControls(ctx, cfg) {
    const bar = document.getElementById("controls");
    ui.clock = el("span", {class: "clock"});
    const btn = (id, name, label, cls = "") =>
      el("button", {class: "ctl " + cls, html: icon(name, 22), attrs: {id, "aria-label": label, title: ""}});
    ui.micBtn = btn("ctl-mic", "micOff", "Turn on microphone", "off");
    ui.camBtn = btn("ctl-cam", "camOff", "Turn on camera", "off");
    ui.handBtn = btn("ctl-hand", "hand", "Raise hand");
    const reactBtn = btn("ctl-react", "emoji", "Send a reaction");
    const presentBtn = btn("ctl-present", "present", "Present now");
    const moreBtn = btn("ctl-more", "more", "More options");
    ui.leaveBtn = el("button", {class: "leave", html: icon("leave", 24), attrs: {id: "ctl-leave", "aria-label": "Leave call"}});
    const infoBtn = btn("ctl-info", "info", "Meeting details", "flat");
    const peopleBtn = btn("ctl-people", "people", "People", "flat");
    ui.chatBtn = btn("ctl-chat", "chat", "Chat with everyone", "flat active");
    const shapesBtn = btn("ctl-activities", "shapes", "Activities", "flat");
    bar.append(
      el("div", {class: "ctl-left"}, ui.clock, el("span", {class: "sep", text: "|"}), el("span", {class: "code", text: cfg.meeting_code || ""})),
      el("div", {class: "ctl-center"}, ui.micBtn, ui.camBtn, ui.handBtn, reactBtn, presentBtn, moreBtn, ui.leaveBtn),
      el("div", {class: "ctl-right"}, infoBtn, peopleBtn, ui.chatBtn, shapesBtn),
    );
    ui.micBtn.addEventListener("click", () => { state.mic = !state.mic; renderSelf(); });
    ui.camBtn.addEventListener("click", () => { state.cam = !state.cam; renderSelf(); });
    ui.handBtn.addEventListener("click", () => { state.hand = !state.hand; renderSelf(); });
    ui.chatBtn.addEventListener("click", () => setChatOpen(!state.chatOpen));
    ui.leaveBtn.addEventListener("click", () => leave(ctx));
  }

  function renderSelf() {
    const s = ui.selfTile;
    ui.micBtn.innerHTML = icon(state.mic ? "mic" : "micOff", 22);
    ui.micBtn.classList.toggle("off", !state.mic);
    ui.micBtn.setAttribute("aria-label", state.mic ? "Turn off microphone" : "Turn on microphone");
    ui.camBtn.innerHTML = icon(state.cam ? "cam" : "camOff", 22);
    ui.camBtn.classList.toggle("off", !state.cam);
    ui.camBtn.setAttribute("aria-label", state.cam ? "Turn off camera" : "Turn on camera");
    ui.handBtn.classList.toggle("raised", state.hand);
    s.micIcon.innerHTML = icon(state.mic ? "mic" : "micOff", 14);
    s.tile.classList.toggle("muted", !state.mic);
    s.tile.classList.toggle("hand-up", state.hand);
    if (state.cam && !s.feed) {
      s.feed = webcam(s.p, s.k);
      s.tile.insertBefore(s.feed, s.tile.querySelector(".nametag"));
    }
    if (s.feed) s.feed.hidden = !state.cam;
    s.tile.classList.toggle("has-cam", state.cam);
  }

  function buildChat(ctx, cfg) {
    const side = document.getElementById("side");
    ui.messages = el("div", {class: "messages", attrs: {id: "chat-messages"}});
    ui.chatInput = el("input", {attrs: {id: "chat-input", type: "text", autocomplete: "off", spellcheck: "false",
      placeholder: cfg.chat_placeholder || "Send a message", "aria-label": "Send a message to everyone"}});
    ui.sendBtn = el("button", {class: "send", html: icon("send", 20), attrs: {id: "chat-send", "aria-label": "Send message"}});
    const closeBtn = el("button", {class: "close", html: icon("close", 20), attrs: {"aria-label": "Close"}});
    side.append(
      el("div", {class: "side-head"}, el("h2", {text: "In-call messages"}), closeBtn),
      el("div", {class: "side-note", text: "Messages can only be seen by people in the call and are deleted when the call ends."}),
      ui.messages,
      el("div", {class: "composer"}, ui.chatInput, ui.sendBtn),
    );
    for (const m of cfg.chat_history || []) addMessage(m.from || "", m.text || "", m.time || "");
    closeBtn.addEventListener("click", () => setChatOpen(false));
    const field = answerField(ctx);
    async function send() {
      const text = ui.chatInput.value.trim();
      if (!text || state.left) return;
      ui.chatInput.value = "";
      addMessage("You", text, timeOfDay(ui.base + ctx.now()));
      if (field && !state.sent) {
        state.sent = true;  // the first message the agent sends is its answer
        await ctx.checkAnswer(field, text);
      }
    }
    ui.chatInput.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); send(); } });
    ui.sendBtn.addEventListener("click", send);
  }

  function addMessage(from, text, time) {
    const last = ui.messages.lastElementChild;
    // Consecutive messages from one sender share a header, as in Meet.
    if (last && last.dataset.from === from) {
      last.append(el("div", {class: "msg-text", text}));
    } else {
      ui.messages.append(el("div", {class: "msg", attrs: {"data-from": from}},
        el("div", {class: "msg-head"}, el("span", {class: "msg-from", text: from}), el("span", {class: "msg-time", text: time})),
        el("div", {class: "msg-text", text})));
    }
    ui.messages.scrollTop = ui.messages.scrollHeight;
  }

  function setChatOpen(open) {
    state.chatOpen = open;
    document.getElementById("app").classList.toggle("chat-closed", !open);
    ui.chatBtn.classList.toggle("active", open);
    if (open) ui.chatInput.focus();
  }

  function setSpeaking(speaker, on) {
    ui.speaking[speaker] = Math.max(0, (ui.speaking[speaker] || 0) + (on ? 1 : -1));
    const tile = ui.tiles[speaker];
    if (tile) tile.classList.toggle("speaking", ui.speaking[speaker] > 0 && !state.left);
  }

  function leave(ctx) {
    state.left = true;
    ctx.stopAudio();
    const screen = document.getElementById("left-screen");
    const rejoin = el("button", {class: "rejoin", text: "Rejoin", attrs: {id: "rejoin"}});
    screen.replaceChildren(el("div", {class: "left-box"},
      el("h1", {text: "You left the meeting"}),
      el("div", {class: "left-actions"}, rejoin)));
    screen.hidden = false;
    rejoin.addEventListener("click", () => {
      state.left = false;
      screen.hidden = true;
      // Lines that started while we were away are missed; the rest play at their times.
      ctx.audioClips.forEach((clip, i) => {
        if (clip.t > ctx.now()) ctx.playClip(i, clip.t - ctx.now());
      });
    });
  }

  function tick(ctx) {
    const t = ctx.now();
    ui.clock.textContent = timeOfDay(ui.base + t);
    renderSlide(ctx, activeSlide(ctx, t));
    for (const item of ctx.timeline) {
      if (item.chat !== undefined && item.t <= t && !ui.shownChat.has(item)) {
        ui.shownChat.add(item);
        addMessage(item.from || "", String(item.chat), timeOfDay(ui.base + item.t));
      }
    }
  }

  DynaCU.task({
    setup(ctx) {
      const cfg = ctx.config;
      document.title = (cfg.title || "Meeting") + (cfg.meeting_code ? " – " + cfg.meeting_code : "");
      ui.base = clockBase(cfg);
      ui.shownChat = new Set();
      buildTopbar(cfg);
      buildShare(cfg);
      buildTiles(ctx, cfg);
      buildControls(ctx, cfg);
      buildChat(ctx, cfg);
      renderSelf();
      tick(ctx);
    },
    start(ctx) {
      // The runtime plays each clip at its time; light up the speaker's tile meanwhile.
      ctx.audioClips.forEach((clip) => {
        ctx.at(clip.t, () => setSpeaking(clip.speaker, true));
        ctx.at(clip.t + clip.duration, () => setSpeaking(clip.speaker, false));
      });
      tick(ctx);
      ctx.every(0.2, () => tick(ctx));
    },
  });
})();
