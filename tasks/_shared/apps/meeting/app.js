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
 *                  first participant); a slide line's `by` hands the presentation over
 *   participants   [{speaker, name, role, color, camera, skin, hair, shirt, wall, muted}]:
 *                  speaker is the script's speaker key; camera = true draws a webcam picture,
 *                  otherwise an avatar with initials in `color`
 *   self           {name, color, camera} the agent's own tile (default "You", camera off); its
 *                  microphone starts muted (the red mic button)
 *   chat_history   [{from, text, time}] messages already in the chat at t = 0
 *   chat_placeholder  the chat box's placeholder (default "Send a message")
 *   answer_field   the answer field a chat message is checked against (default: the task's only
 *                  field); the first message the agent sends decides the episode. Not used when
 *                  the task has questions, a poll or a hand window (those decide instead).
 *
 *   questions      [{field, clip, window_s, via, ack_clip}]: someone on the call asks the agent
 *                  (by name) a question: clip is the index of the spoken line that asks it. Its
 *                  answer window opens when the clip ends and lasts window_s seconds (default
 *                  15; nothing on screen counts down). via = "chat" (the first message sent in
 *                  the window is the answer), "voice" (the first utterance heard while the
 *                  agent's mic is on; needs listens = true) or "either". The first question
 *                  plays at its script time; later questions and every ack_clip are replies:
 *                  they play once the answer before them was heard, so their script times are
 *                  nominal. A right answer plays ack_clip and moves on (after the last one the
 *                  episode succeeds); a wrong one, or a near miss said, is "wrong_answer";
 *                  nothing by the end of the window is "timeout" (an answer begun in time may
 *                  finish and be transcribed after it). Chat sent and speech heard while no
 *                  window is open are ordinary conversation and decide nothing.
 *                  While the page listens, the agent's tile shows a live level meter when its
 *                  mic is on; talking with the mic off is not heard by the call, and after a
 *                  moment a hint under the mic button says so, as call platforms do.
 *   poll           {field, question, options, opens_at, open_s, by, ack_clip}: the host
 *                  launches a poll at opens_at (episode seconds; the side panel switches to it);
 *                  the agent picks an option and presses Vote: the picked option is checked as
 *                  the answer (success or "wrong_answer"). The options appear in a seeded order;
 *                  the poll closes after open_s seconds (shown as a countdown) and leaves the
 *                  DOM; closing without a vote is "timeout".
 *   hand           {from, to, early, ack_clip}: raising the hand (the hand button) between from
 *                  and to (episode seconds) succeeds; raising it before `from` is the failure
 *                  `early` (default "wrong_moment"); no hand by `to` is "timeout".
 *
 * Timeline lines:
 *   slides  any of slide_title, bullets (list), show (body text), slide (number), table, chart,
 *           doc; the slide is shown from t until `until` or the next slide. No active slide:
 *           nobody presents. by = "speaker key" makes that participant the presenter from then.
 *           table = {columns = [...], rows = [[...], ...], note}: a table on the slide; an
 *                   empty string is an empty cell, a row's first cell is its label.
 *           chart = {bars = [{label, value, text}], unit, values}: a bar chart; each bar shows
 *                   `text` (or its value) above it unless values = false.
 *           doc = {file, sections = [{heading, text}], page}: a shared document (an editor
 *                   window with one page) instead of a slide; slide_title is the document's
 *                   heading on the page.
 *   chat    chat = "text", from = "Name": a message that arrives at t and stays in the chat.
 *   hand    hand = "speaker key or name", until: that participant's raised-hand badge shows from
 *           t until `until` (someone else raising a hand).
 *
 * Audio plays at the script's times (replies excepted, see questions). Leaving the call stops it;
 * rejoining picks up the lines that have not started yet, as a real call would. Slides, the
 * poll and raised hands leave the DOM when their time is over, also once the episode is decided.
 */
(function () {
  "use strict";

  const {el, initials, barChart} = DynaCU.ui;

  // ---- icons ------------------------------------------------------------------------------
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
  const icon = DynaCU.ui.icons(ICON_PATHS);

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
  const ui = {tiles: {}, byName: {}, speaking: {}};
  const state = {left: false, mic: false, cam: false, hand: false, chatOpen: true, sent: false};
  const micLog = [];   // [performance.now(), on] each time the agent's mic is switched

  /** Whether the agent's mic was on at performance.now() time `ms`. */
  function micOnAt(ms) {
    let on = false;
    for (const [t, v] of micLog) if (t <= ms) on = v;
    return on;
  }

  /** The chat's own answer field: only in tasks where the first chat message is the answer. */
  function chatAnswerField(ctx) {
    const cfg = ctx.config;
    if (cfg.questions || cfg.poll || cfg.hand) return null;
    const fields = Object.keys(ctx.episode.answers);
    if (cfg.answer_field) return cfg.answer_field;
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
      const tile = el("div", {class: "tile" + (p.camera ? " has-cam" : "") + (p.self ? " self" : ""), attrs: {"data-speaker": p.speaker || ""}},
        el("div", {class: "avatar-wrap"}, avatar),
        feed,
        el("div", {class: "nametag"}, el("span", {class: "tag-name", text: label})),
        el("div", {class: "tile-mic"}, micIcon, bars),
        el("span", {class: "hand-badge", html: icon("hand", 16)}),
      );
      if (p.self) tile.id = "self-tile";
      box.append(tile);
      if (p.self) ui.selfTile = {tile, micIcon, bars: Array.from(bars.children), feed, p, k};
      else {
        if (p.speaker) ui.tiles[p.speaker] = tile;
        if (p.name) ui.byName[p.name] = tile;
      }
    });
    ui.count.textContent = String(people.length);
  }

  function buildShare(cfg) {
    const share = document.getElementById("share");
    ui.presenterName = el("span");
    ui.presenting = el("div", {class: "presenting-label"}, el("span", {html: icon("present", 16)}), ui.presenterName);
    ui.slide = el("div", {class: "slide"});
    share.append(ui.presenting, ui.slide);
  }

  function presenterOf(ctx, key) {
    const people = ctx.config.participants || [];
    return (key && people.find((p) => p.speaker === key)) || people[0];
  }

  function isSlide(item) {
    return item.chat === undefined && item.hand === undefined &&
      Boolean(item.slide_title || item.bullets || item.show || item.slide !== undefined || item.table || item.chart || item.doc);
  }

  /** The slide active at time t, or null (the latest started line wins). */
  function activeSlide(ctx, t) {
    let current = null;
    for (const item of ctx.timeline) {
      if (!isSlide(item) || item.t > t) continue;
      if (!current || item.t >= current.t) current = item;
    }
    return current && (current.until == null || t < current.until) ? current : null;
  }

  /** Who presents at time t: the latest slide line with `by` up to t, else config.presenter. */
  function presenterAt(ctx, t) {
    let key = ctx.config.presenter, at = -1;
    for (const item of ctx.timeline) if (isSlide(item) && item.by && item.t <= t && item.t >= at) { key = item.by; at = item.t; }
    return presenterOf(ctx, key);
  }

  function renderTable(spec) {
    const table = el("table", {class: "slide-table"});
    const head = el("tr");
    (spec.columns || []).forEach((c) => head.append(el("th", {text: String(c)})));
    table.append(el("thead", {}, head));
    const body = el("tbody");
    (spec.rows || []).forEach((row) => {
      const tr = el("tr");
      row.forEach((cell, i) => {
        const text = cell === null || cell === undefined ? "" : String(cell);
        tr.append(el(i === 0 ? "th" : "td", {class: text === "" ? "blank" : "", text}));
      });
      body.append(tr);
    });
    table.append(body);
    return el("div", {class: "slide-table-wrap"}, table, spec.note ? el("p", {class: "slide-note", text: spec.note}) : null);
  }

  function renderChart(spec) {
    const plot = barChart(spec.bars || [], {max: spec.max, values: spec.values, tone: true});
    return el("div", {class: "slide-chart"}, spec.unit ? el("div", {class: "chart-unit", text: spec.unit}) : null, plot);
  }

  function renderDoc(item) {
    const doc = item.doc;
    const page = el("div", {class: "doc-page"});
    if (item.slide_title) page.append(el("h2", {text: item.slide_title}));
    (doc.sections || []).forEach((s) => {
      if (s.heading) page.append(el("h3", {text: String(s.heading)}));
      if (s.text) page.append(el("p", {text: String(s.text)}));
    });
    return el("div", {class: "doc-window"},
      el("div", {class: "doc-bar"},
        el("span", {class: "doc-icon"}),
        el("span", {class: "doc-file", text: doc.file || "Untitled document"}),
        el("span", {class: "doc-menu", text: "File  Edit  View  Insert  Format  Tools"})),
      el("div", {class: "doc-ruler"}),
      el("div", {class: "doc-scroll"}, page),
      doc.page ? el("div", {class: "doc-pageno", text: doc.page}) : null);
  }

  function renderSlide(ctx, item, t) {
    const cfg = ctx.config;
    const stage = document.getElementById("stage");
    stage.classList.toggle("presenting", Boolean(item));
    const who = presenterAt(ctx, t);
    const label = (who ? who.name : "Someone") + " is presenting";
    if (ui.presenterName.textContent !== label) ui.presenterName.textContent = label;
    if (ui.slideItem === item) return;
    ui.slideItem = item;
    ui.slide.replaceChildren();
    ui.slide.classList.toggle("is-doc", Boolean(item && item.doc));
    if (!item) return;
    if (item.doc) { ui.slide.append(renderDoc(item)); return; }
    const body = el("div", {class: "slide-body"});
    if (item.slide_title) body.append(el("h2", {text: item.slide_title}));
    if (item.show) body.append(el("p", {class: "slide-text", text: item.show}));
    if (Array.isArray(item.bullets) && item.bullets.length) {
      body.append(el("ul", {}, ...item.bullets.map((b) => el("li", {text: String(b)}))));
    }
    if (item.table) body.append(renderTable(item.table));
    if (item.chart) body.append(renderChart(item.chart));
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
    ui.muteHint = el("div", {class: "mute-hint", attrs: {id: "mute-hint", hidden: ""}},
      el("strong", {text: "Are you talking?"}), el("span", {text: "Your mic is off. Click the mic to turn it on."}));
    ui.handPill = el("div", {class: "hand-pill", attrs: {hidden: ""}}, el("span", {html: icon("hand", 16)}), el("span", {text: "Your hand is raised"}));
    const micWrap = el("div", {class: "mic-wrap"}, ui.micBtn, ui.muteHint);
    bar.append(
      el("div", {class: "ctl-left"}, ui.clock, el("span", {class: "sep", text: "|"}), el("span", {class: "code", text: cfg.meeting_code || ""})),
      el("div", {class: "ctl-center"}, micWrap, ui.camBtn, ui.handBtn, reactBtn, presentBtn, moreBtn, ui.leaveBtn),
      el("div", {class: "ctl-right"}, infoBtn, peopleBtn, ui.chatBtn, shapesBtn),
    );
    document.getElementById("app").append(ui.handPill);
    ui.micBtn.addEventListener("click", () => {
      state.mic = !state.mic;
      micLog.push([performance.now(), state.mic]);
      if (state.mic) ui.muteHint.hidden = true;
      renderSelf();
    });
    ui.camBtn.addEventListener("click", () => { state.cam = !state.cam; renderSelf(); });
    ui.handBtn.addEventListener("click", () => {
      state.hand = !state.hand;
      renderSelf();
      if (state.hand && ui.onHand) ui.onHand();
    });
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
    ui.handBtn.setAttribute("aria-label", state.hand ? "Lower hand" : "Raise hand");
    ui.handPill.hidden = !state.hand;
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
    ui.sideTitle = el("h2", {text: "In-call messages"});
    ui.chatView = el("div", {class: "chat-view"},
      el("div", {class: "side-note", text: "Messages can only be seen by people in the call and are deleted when the call ends."}),
      ui.messages,
      el("div", {class: "composer"}, ui.chatInput, ui.sendBtn));
    side.append(el("div", {class: "side-head"}, ui.sideTitle, closeBtn), ui.chatView);
    for (const m of cfg.chat_history || []) addMessage(m.from || "", m.text || "", m.time || "");
    closeBtn.addEventListener("click", () => setChatOpen(false));
    const field = chatAnswerField(ctx);
    async function send() {
      const text = ui.chatInput.value.trim();
      if (!text || state.left) return;
      ui.chatInput.value = "";
      addMessage("You", text, timeOfDay(ui.base + ctx.now()));
      if (ui.onChat) ui.onChat(text);
      else if (field && !state.sent) {
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
    if (open && !ui.pollOpen) ui.chatInput.focus();
  }

  function setSpeaking(speaker, on) {
    ui.speaking[speaker] = Math.max(0, (ui.speaking[speaker] || 0) + (on ? 1 : -1));
    const tile = ui.tiles[speaker];
    if (tile) tile.classList.toggle("speaking", ui.speaking[speaker] > 0 && !state.left);
  }

  // ---- audio: clips at their times, replies when their turn comes --------------------------
  /** Play clip i after `delay` seconds and light its speaker's tile; returns its end (episode s). */
  function play(ctx, i, delay) {
    const clip = ctx.audioClips[i];
    if (state.left) return ctx.now() + delay + clip.duration;
    const src = ctx.playClip(i, delay);
    const from = ctx.now() + delay, until = from + clip.duration;
    ui.scheduled.push({src, from});
    let lit = false;
    const on = setTimeout(() => { if (!state.left) { lit = true; setSpeaking(clip.speaker, true); } }, delay * 1000);
    const off = () => { clearTimeout(on); if (lit) { lit = false; setSpeaking(clip.speaker, false); } };
    src.addEventListener("ended", off);
    ui.lights.push(off);
    return until;
  }

  /** Stop the clips that have not started yet (the conversation took another turn). */
  function cancelFuture(ctx) {
    const t = ctx.now();
    for (const {src, from} of ui.scheduled.splice(0)) if (from > t) { try { src.stop(); } catch (e) { /* not started */ } }
  }

  function leave(ctx) {
    state.left = true;
    ctx.stopAudio();
    ui.lights.splice(0).forEach((off) => off());
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
        if (!ui.replies.has(i) && clip.t > ctx.now()) play(ctx, i, clip.t - ctx.now());
      });
    });
  }

  // ---- the clock, slides, chat lines and raised hands (own timer: transient content leaves
  // the DOM on time even once the episode is decided) -----------------------------------------
  function tick(ctx) {
    const t = ctx.now();
    ui.clock.textContent = timeOfDay(ui.base + t);
    renderSlide(ctx, activeSlide(ctx, t), t);
    for (const item of ctx.timeline) {
      if (item.chat !== undefined && item.t <= t && !ui.shownChat.has(item)) {
        ui.shownChat.add(item);
        addMessage(item.from || "", String(item.chat), timeOfDay(ui.base + item.t));
      }
      if (item.hand !== undefined) {
        const tile = ui.tiles[item.hand] || ui.byName[item.hand];
        const on = item.t <= t && (item.until == null || t < item.until);
        if (tile && on !== tile.classList.contains("hand-up")) tile.classList.toggle("hand-up", on);
      }
    }
    if (ui.pollTick) ui.pollTick(t);
  }

  // ---- questions asked of the agent -------------------------------------------------------
  function runQuestions(ctx) {
    const questions = ctx.config.questions || [];
    const clips = ctx.audioClips;
    const app = document.getElementById("app");
    let open = null, windowEnds = 0, begun = false;
    function openWindow(q, k, at) {
      ctx.at(at, () => {
        open = Object.assign({index: k}, q);
        begun = false;
        windowEnds = ctx.now() + (q.window_s || 15);
        app.dataset.waiting = q.via || "chat";   // privileged state for tests, no content
        app.dataset.question = String(k);
      });
    }
    function closeWindow() { open = null; delete app.dataset.waiting; delete app.dataset.question; }
    function ask(k, at) {
      const q = questions[k];
      const end = k === 0 ? clips[q.clip].t + clips[q.clip].duration : play(ctx, q.clip, Math.max(0, at - ctx.now()));
      openWindow(q, k, end);
    }
    function advance(q) {
      let t = ctx.now() + 0.4;
      if (q.ack_clip !== undefined) t = play(ctx, q.ack_clip, 0.4) + 0.3;
      if (q.index + 1 < questions.length) ask(q.index + 1, t);
      else ctx.at(t, () => ctx.succeed());
    }
    async function judge(text, via) {
      if (!open || !(open.via === via || open.via === "either" || (!open.via && via === "chat"))) return;
      const q = open;
      closeWindow();
      const verdict = via === "voice" ? await ctx.gradeSpoken(q.field, text) : ((await ctx.grade(q.field, text)) ? "accepted" : null);
      if (verdict !== "accepted") { ctx.fail("wrong_answer"); return; }
      advance(q);
    }
    ui.onChat = (text) => judge(text, "chat");
    ui.onVoice = (text) => judge(text, "voice");
    ui.onVoiceLevel = (level) => { if (open && level > 0.01) begun = true; };
    ctx.every(0.25, () => {
      if (!open || ctx.now() < windowEnds) return;
      if (begun && ctx.now() < windowEnds + 15) return;  // an answer begun in time is finishing
      closeWindow();
      ctx.timeout();
    });
    if (questions.length) ask(0, 0);
  }

  /** Listen to the agent's microphone: a live meter on its tile, muted speech unheard. */
  async function listen(ctx) {
    const s = ui.selfTile;
    let loudSince = null;
    const mic = await ctx.listen((text) => {
      const log = window.DynaCU.mic && window.DynaCU.mic.log;
      const entry = log && log[log.length - 1];
      if (entry && !micOnAt(entry.onset)) return;   // said with the mic off: the call never heard it
      if (ui.onVoice) ui.onVoice(text);
    });
    setInterval(() => {
      const level = mic.level();
      const loud = level > 0.01;
      const live = loud && state.mic && !state.left;
      s.tile.classList.toggle("speaking", live);
      const scale = Math.min(1, level / 0.1);
      s.bars.forEach((b, i) => { b.style.height = live ? (4 + Math.round(scale * (6 + 2 * i))) + "px" : ""; });
      if (live && ui.onVoiceLevel) ui.onVoiceLevel(level);
      // Talking into a muted mic for a moment brings up the hint, as call platforms do.
      if (loud && !state.mic) {
        if (loudSince === null) loudSince = performance.now();
        if (performance.now() - loudSince > 600 && ui.muteHint.hidden) {
          ui.muteHint.hidden = false;
          clearTimeout(ui.hintTimer);
          ui.hintTimer = setTimeout(() => { ui.muteHint.hidden = true; }, 5000);
        }
      } else if (!loud) loudSince = null;
    }, 50);
  }

  // ---- a poll the host launches -------------------------------------------------------------
  function buildPoll(ctx) {
    const poll = ctx.config.poll;
    const options = (poll.options || []).slice();
    for (let i = options.length - 1; i > 0; i--) {
      const j = Math.floor(ctx.rng() * (i + 1));
      [options[i], options[j]] = [options[j], options[i]];
    }
    const closesAt = poll.opens_at + (poll.open_s || 20);
    let view = null, countdown = null, picked = null, voted = false, phase = "waiting";
    const host = presenterOf(ctx, poll.by);
    function openPoll() {
      phase = "open";
      ui.pollOpen = true;
      if (!state.chatOpen) setChatOpen(true);
      ui.sideTitle.textContent = "Polls";
      countdown = el("div", {class: "poll-countdown", attrs: {id: "poll-countdown"}});
      const vote = el("button", {class: "poll-vote", text: "Vote", attrs: {id: "poll-vote", disabled: ""}});
      const buttons = options.map((label) => {
        const b = el("button", {class: "poll-option", attrs: {"data-label": String(label)}},
          el("span", {class: "radio"}), el("span", {class: "opt-text", text: String(label)}));
        b.addEventListener("click", () => {
          if (voted) return;
          picked = String(label);
          buttons.forEach((o) => o.classList.toggle("picked", o === b));
          vote.disabled = false;
        });
        return b;
      });
      vote.addEventListener("click", async () => {
        if (voted || picked === null) return;
        voted = true;
        buttons.forEach((o) => { o.disabled = true; });
        vote.disabled = true;
        vote.textContent = "Vote submitted";
        const ok = await ctx.grade(poll.field, picked);
        if (!ok) { ctx.fail("wrong_answer"); return; }
        let t = ctx.now() + 0.3;
        if (poll.ack_clip !== undefined) t = play(ctx, poll.ack_clip, 0.3) + 0.3;
        ctx.at(t, () => ctx.succeed());
      });
      view = el("div", {class: "poll-view", attrs: {id: "poll"}},
        el("div", {class: "poll-by", text: (host ? host.name : "The host") + " started a poll"}),
        el("div", {class: "poll-card"},
          el("p", {class: "poll-question", text: poll.question || ""}),
          ...buttons,
          el("div", {class: "poll-foot"}, countdown, vote)));
      ui.chatView.hidden = true;
      document.getElementById("side").append(view);
    }
    function closePoll() {
      phase = "closed";
      ui.pollOpen = false;
      if (view) view.remove();
      view = null;
      ui.sideTitle.textContent = "In-call messages";
      ui.chatView.hidden = false;
      if (!voted) ctx.timeout();
    }
    ui.pollTick = (t) => {
      if (phase === "waiting" && t >= poll.opens_at && t < closesAt) openPoll();
      if (phase === "open" && t >= closesAt) closePoll();
      if (phase === "open" && countdown) {
        const left = Math.max(0, Math.ceil(closesAt - t));
        const text = "Closes in 0:" + String(left).padStart(2, "0");
        if (countdown.textContent !== text) countdown.textContent = text;
      }
    };
  }

  // ---- a moment to raise the hand -----------------------------------------------------------
  function runHand(ctx) {
    const hand = ctx.config.hand;
    let done = false;
    ui.onHand = () => {
      if (done || ctx.result !== "pending") return;
      const t = ctx.now();
      if (t < hand.from) { done = true; ctx.fail(hand.early || "wrong_moment"); return; }
      if (t > hand.to) return;
      done = true;
      cancelFuture(ctx);
      let end = t + 0.3;
      if (hand.ack_clip !== undefined) end = play(ctx, hand.ack_clip, 0.3) + 0.3;
      ctx.at(end, () => ctx.succeed());
    };
    ctx.at(hand.to, () => { if (!done) { done = true; ctx.timeout(); } });
  }

  DynaCU.task({
    autoplayAudio: false,   // clips are scheduled here: replies wait for their turn
    setup(ctx) {
      const cfg = ctx.config;
      document.title = (cfg.title || "Meeting") + (cfg.meeting_code ? " – " + cfg.meeting_code : "");
      ui.base = clockBase(cfg);
      ui.shownChat = new Set();
      ui.lights = [];
      ui.scheduled = [];
      ui.replies = new Set();
      (cfg.questions || []).forEach((q, k) => {
        if (k > 0) ui.replies.add(q.clip);
        if (q.ack_clip !== undefined) ui.replies.add(q.ack_clip);
      });
      if (cfg.poll && cfg.poll.ack_clip !== undefined) ui.replies.add(cfg.poll.ack_clip);
      if (cfg.hand && cfg.hand.ack_clip !== undefined) ui.replies.add(cfg.hand.ack_clip);
      buildTopbar(cfg);
      buildShare(cfg);
      buildTiles(ctx, cfg);
      buildControls(ctx, cfg);
      buildChat(ctx, cfg);
      if (cfg.poll) buildPoll(ctx);
      renderSelf();
      tick(ctx);
    },
    async start(ctx) {
      const cfg = ctx.config;
      ctx.audioClips.forEach((clip, i) => { if (!ui.replies.has(i)) play(ctx, i, clip.t); });
      tick(ctx);
      setInterval(() => tick(ctx), 200);
      if (cfg.questions) runQuestions(ctx);
      if (cfg.hand) runHand(ctx);
      const listens = (cfg.questions || []).some((q) => q.via === "voice" || q.via === "either");
      if (listens) await listen(ctx);
    },
  });
})();
