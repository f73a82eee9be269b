/* Podcast player app (category A).
 *
 * A desktop podcast client: library sidebar, the episode's artwork and details, a chapter list
 * (or other episodes), an answer panel, and a player bar whose progress and times follow the
 * episode clock. There is no transcript: what is said is only heard.
 *
 * Everything shown comes from the task's [config] and timeline:
 *
 *   app_name       brand in the sidebar (default "Podcasts")
 *   show           show name                     host       "Hosted by ..." line (optional)
 *   episode_title  episode title                 episode_label  e.g. "Episode 42" (optional)
 *   published      e.g. "Mar 3, 2025" (optional) description    a paragraph (optional)
 *   length_s       episode length shown (default: the task's duration_s)
 *   autoplay       start playing at t = 0 (default true)
 *   allow_seek     chapters, skip buttons and the progress bar seek (default true)
 *   art            {bg, bg2, fg, motif, label}; motif: mic | waves | cup | chart | globe | leaf
 *   chapters       [{t, title}] (optional; t in episode seconds)
 *   more_episodes  [{title, meta}] listed under the chapters (optional)
 *   library        [{name, color}] the sidebar's "Your shows" (optional)
 *   live           a live show (default false): LIVE badge and listener count instead of the
 *                  progress bar and skip buttons; the position is the wall clock, so pausing
 *                  only silences it and playing again resumes at the live edge
 *   listeners      listeners shown for a live show (drifts a little while it runs)
 *
 * The panel on the right is one of (the first present wins: chat, poll, bookmark, answer):
 *
 *   answer    {field, title, label, placeholder, button}; field defaults to the task's only
 *             answer field. fields = [{field, label, placeholder}] asks several at once (all
 *             must be right). closes_at = seconds after the start (wall clock): a countdown
 *             ("countdown" text, default "Closes in") and, if nothing was sent by then, the
 *             panel closes ("closed_text") and the episode ends as "timeout".
 *   bookmark  {field, window, title, label, placeholder, button}: "new bookmark at <position>"
 *             with a title box. Adding one decides the episode: a position outside
 *             window = [from, to) (episode seconds) is the failure "wrong_moment", else the
 *             title is checked as the answer. Pausing keeps the position still.
 *   poll      {field, title, question, options, opens_at, open_s, countdown, closed_text,
 *             empty_text}:
 *             a listener poll that opens when the episode reaches opens_at and stays open
 *             open_s seconds of wall-clock time; options appear in an order drawn from
 *             ctx.rng(); a vote is checked as the answer; a poll that closes unanswered ends
 *             the episode as "timeout".
 *   chat      {field, reply_to, title, placeholder, max_messages}: the live chat. Comments come
 *             from the timeline; each has a Reply button. A reply to reply_to's comment is
 *             checked as the answer; a reply to anyone else is the failure "wrong_comment";
 *             a message that replies to nobody is only posted.
 *
 * Timeline lines (script lines with `show`): the text appears over the artwork, like chapter art,
 * while the episode position is in [t, until); with kind = "toast" it appears as a notification
 * at the top right instead; with kind = "comment" and author = "handle" it is a chat comment,
 * shown from t until `until` or until newer messages push it out of the chat. Timeline and
 * audio follow the episode position, so pausing the episode pauses them too (a live show's
 * position runs on regardless).
 *
 * Playback: the page schedules the clips itself (autoplayAudio: false) so that pausing stops
 * them. Pausing in the middle of a spoken line rewinds the position to the start of that line,
 * so resuming replays the line whole; a live show instead resumes mid-line, at the live edge.
 */
(function () {
  "use strict";

  const {el, clock, Track} = DynaCU.ui;

  // ---- icons ------------------------------------------------------------------------------
  const ICON_PATHS = {
    play: '<path d="M8 5.5v13a1 1 0 0 0 1.5.86l10.2-6.5a1 1 0 0 0 0-1.72L9.5 4.64A1 1 0 0 0 8 5.5z"/>',
    pause: '<rect x="6" y="5" width="4" height="14" rx="1"/><rect x="14" y="5" width="4" height="14" rx="1"/>',
    back: '<path d="M12 5V2L7 6l5 4V7a6 6 0 1 1-6 6H4a8 8 0 1 0 8-8z"/>',
    fwd: '<path d="M12 5V2l5 4-5 4V7a6 6 0 1 0 6 6h2a8 8 0 1 1-8-8z"/>',
    home: '<path d="M10 20v-6h4v6h5v-8h3L12 3 2 12h3v8z"/>',
    browse: '<path d="M4 4h7v7H4zM13 4h7v7h-7zM4 13h7v7H4zM13 13h7v7h-7z"/>',
    library: '<path d="M4 6H2v14a2 2 0 0 0 2 2h14v-2H4zm16-4H8a2 2 0 0 0-2 2v12a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V4a2 2 0 0 0-2-2zm-1 9H9V9h10zm-4 4H9v-2h6zm4-8H9V5h10z"/>',
    download: '<path d="M19 9h-4V3H9v6H5l7 7zM5 18v2h14v-2z"/>',
    search: '<path d="M15.5 14h-.8l-.3-.3A6.5 6.5 0 1 0 9.5 16a6.5 6.5 0 0 0 4.2-1.6l.3.3v.8l5 5 1.5-1.5zm-6 0a4.5 4.5 0 1 1 0-9 4.5 4.5 0 0 1 0 9z"/>',
    plus: '<path d="M19 13h-6v6h-2v-6H5v-2h6V5h2v6h6z"/>',
    share: '<path d="M18 16a3 3 0 0 0-2 .8l-7.1-4.1a3 3 0 0 0 0-1.4L16 7.2A3 3 0 1 0 15 5l.1.7L8 9.8a3 3 0 1 0 0 4.4l7.1 4.2-.1.6a3 3 0 1 0 3-3z"/>',
    more: '<circle cx="5" cy="12" r="2"/><circle cx="12" cy="12" r="2"/><circle cx="19" cy="12" r="2"/>',
    volume: '<path d="M3 9v6h4l5 5V4L7 9zm13.5 3A4.5 4.5 0 0 0 14 8v8a4.5 4.5 0 0 0 2.5-4zM14 3.2v2.1a7 7 0 0 1 0 13.4v2.1a9 9 0 0 0 0-17.6z"/>',
    queue: '<path d="M3 6h13v2H3zm0 5h13v2H3zm0 5h9v2H3zm14-1v-5l5 3.5z"/>',
    podcast: '<path d="M12 2a9 9 0 0 0-4 17.1v-2.3a7 7 0 1 1 8 0v2.3A9 9 0 0 0 12 2zm0 4a5 5 0 0 0-3 9v-2.8a3 3 0 1 1 6 0V15a5 5 0 0 0-3-9zm-1.5 7.5h3L13 22h-2z"/>',
    check: '<path d="M9 16.2 4.8 12l-1.4 1.4L9 19 21 7l-1.4-1.4z"/>',
    bookmark: '<path d="M17 3H7a2 2 0 0 0-2 2v16l7-3 7 3V5a2 2 0 0 0-2-2z"/>',
    reply: '<path d="M10 9V5l-7 7 7 7v-4.1c5 0 8.5 1.6 11 5.1-1-5-4-10-11-11z"/>',
    close: '<path d="M19 6.4 17.6 5 12 10.6 6.4 5 5 6.4 10.6 12 5 17.6 6.4 19l5.6-5.6 5.6 5.6 1.4-1.4-5.6-5.6z"/>',
    poll: '<path d="M4 20h4V10H4zm6 0h4V4h-4zm6 0h4v-7h-4z"/>',
    clock: '<path d="M12 2a10 10 0 1 0 0 20 10 10 0 0 0 0-20zm0 18a8 8 0 1 1 0-16 8 8 0 0 1 0 16zm.5-13H11v6l5.2 3.2.8-1.3-4.5-2.7z"/>',
    people: '<path d="M16 11a3 3 0 1 0 0-6 3 3 0 0 0 0 6zm-8 0a3 3 0 1 0 0-6 3 3 0 0 0 0 6zm0 2c-2.3 0-7 1.2-7 3.5V19h14v-2.5C15 14.2 10.3 13 8 13zm8 0h-1c1.2.9 2 2 2 3.5V19h6v-2.5c0-2.3-4.7-3.5-7-3.5z"/>',
  };
  const icon = DynaCU.ui.icons(ICON_PATHS);

  /** A skip button's icon: the circular arrow with the seconds in it. */
  function skipIcon(dir, seconds) {
    return `<svg viewBox="0 0 24 24" width="30" height="30" fill="currentColor" aria-hidden="true">${ICON_PATHS[dir]}` +
      `<text x="12" y="15.6" text-anchor="middle" font-size="6.5" font-weight="700" font-family="DejaVu Sans, sans-serif">${seconds}</text></svg>`;
  }

  /** Set markup only when it changes, so a click in progress keeps its target. */
  function setHtml(node, html) {
    if (node.dataset.html === html) return;
    node.dataset.html = html;
    node.innerHTML = html;
  }

  // ---- artwork ----------------------------------------------------------------------------
  /** Motif drawings on a 100x100 canvas, in the artwork's foreground colour. */
  const MOTIFS = {
    mic: '<rect x="40" y="14" width="20" height="34" rx="10"/>' +
      '<path d="M31 38a19 19 0 0 0 38 0" fill="none" stroke-width="4" stroke-linecap="round"/>' +
      '<path d="M50 57v9M40 66h20" fill="none" stroke-width="4" stroke-linecap="round"/>',
    waves: [8, 16, 26, 34, 22, 30, 14, 24, 10].map((h, i) =>
      `<rect x="${17 + i * 7.6}" y="${38 - h}" width="4.6" height="${2 * h}" rx="2.3"/>`).join(""),
    cup: '<path d="M28 36h38v14a19 19 0 0 1-38 0z"/>' +
      '<path d="M66 40h4a7 7 0 0 1 0 14h-5" fill="none" stroke-width="4"/>' +
      '<path d="M38 28c-4-5 4-8 0-14M48 28c-4-5 4-8 0-14M58 28c-4-5 4-8 0-14" fill="none" stroke-width="3.4" stroke-linecap="round"/>',
    chart: '<rect x="22" y="44" width="10" height="20" rx="1.5"/><rect x="37" y="34" width="10" height="30" rx="1.5"/>' +
      '<rect x="52" y="26" width="10" height="38" rx="1.5"/><rect x="67" y="14" width="10" height="50" rx="1.5"/>' +
      '<path d="M20 36 40 24l14 6 24-20" fill="none" stroke-width="3.4" stroke-linecap="round" stroke-linejoin="round"/>',
    globe: '<g fill="none" stroke-width="3.4"><circle cx="50" cy="38" r="25"/><ellipse cx="50" cy="38" rx="11" ry="25"/>' +
      '<path d="M25 38h50M29 25h42M29 51h42"/></g>',
    leaf: '<path d="M26 62C26 30 46 14 78 14c0 32-18 50-46 50z"/>' +
      '<path d="M24 68 62 28" fill="none" stroke-width="3.4" stroke-linecap="round" opacity=".55"/>',
  };

  let artworkCount = 0;

  function artwork(art, fallbackLabel, size) {
    const a = Object.assign({bg: "#4338ca", bg2: "#7c3aed", fg: "#ffffff", motif: "mic"}, art || {});
    const id = "art-grad-" + (++artworkCount);  // gradient ids must be unique in the page
    const wrap = el("div", {class: "art", attrs: {style: `width:${size}px;height:${size}px`}});
    wrap.innerHTML =
      `<svg viewBox="0 0 100 100" width="${size}" height="${size}" aria-hidden="true">` +
      `<defs><linearGradient id="${id}" x1="0" y1="0" x2="1" y2="1">` +
      `<stop offset="0"/><stop offset="1"/></linearGradient></defs>` +
      `<rect width="100" height="100" fill="url(#${id})"/>` +
      `<circle cx="86" cy="88" r="30" fill-opacity=".12"/><circle cx="8" cy="6" r="18" fill-opacity=".1"/>` +
      `<g class="motif">${MOTIFS[a.motif] || MOTIFS.mic}</g></svg>`;
    // Colours from config are set as properties, never spliced into markup.
    const stops = wrap.querySelectorAll("stop");
    stops[0].setAttribute("stop-color", a.bg);
    stops[1].setAttribute("stop-color", a.bg2 || a.bg);
    wrap.querySelectorAll("circle[fill-opacity]").forEach((c) => c.setAttribute("fill", a.fg));
    const motif = wrap.querySelector(".motif");
    motif.setAttribute("fill", a.fg);
    motif.setAttribute("stroke", a.fg);
    if (size >= 100) {
      const text = a.label || fallbackLabel || "";
      const label = el("div", {class: "art-label" + (text.length > 32 ? " longer" : text.length > 18 ? " long" : ""), text});
      label.style.color = a.fg;
      wrap.append(label);
    }
    return wrap;
  }

  // ---- the episode clock and its audio ----------------------------------------------------

  // ---- the app ----------------------------------------------------------------------------
  const ui = {};

  function answerField(ctx, answer) {
    if (answer.field) return answer.field;
    const fields = Object.keys(ctx.episode.answers);
    if (fields.length !== 1) throw new Error("podcast: config.answer.field is needed with " + fields.length + " answer fields");
    return fields[0];
  }

  function buildSidebar(cfg) {
    const side = document.getElementById("sidebar");
    side.append(
      el("div", {class: "brand"}, el("span", {class: "brand-icon", html: icon("podcast", 20)}),
        el("span", {text: cfg.app_name || "Podcasts"})),
      el("div", {class: "search", html: icon("search", 16)}, el("span", {text: "Search"})),
    );
    const nav = el("ul", {class: "nav"});
    for (const [name, label] of [["home", "Home"], ["browse", "Browse"], ["library", "Library"], ["download", "Downloads"], ["queue", "Up Next"]]) {
      nav.append(el("li", {class: name === "library" ? "active" : ""}, el("span", {html: icon(name, 18)}), el("span", {text: label})));
    }
    side.append(nav, el("div", {class: "side-heading", text: "Your Shows"}));
    const shows = el("ul", {class: "shows"});
    const library = cfg.library && cfg.library.length ? cfg.library : [];
    const mine = {name: cfg.show, color: (cfg.art || {}).bg || "#4338ca", current: true};
    for (const s of [mine, ...library.filter((s) => s.name !== cfg.show)]) {
      const sw = el("span", {class: "swatch"});
      sw.style.background = s.color || "#64748b";
      shows.append(el("li", {class: s.current ? "current" : ""}, sw, el("span", {text: s.name})));
    }
    side.append(shows);
  }

  function buildHero(ctx, cfg, track) {
    const hero = document.getElementById("hero");
    const art = artwork(cfg.art, cfg.show, 220);
    ui.artNote = el("div", {class: "art-note"});
    art.append(ui.artNote);
    const meta = track.live ? "" : [cfg.episode_label, cfg.published, clock(track.length)].filter(Boolean).join("  ·  ");
    ui.heroPlay = el("button", {class: "pill primary", attrs: {id: "hero-play", "aria-label": "Play"}});
    const actions = el("div", {class: "hero-actions"},
      ui.heroPlay,
      el("button", {class: "pill", html: icon("plus", 18) + "<span>Follow</span>", attrs: {"aria-label": "Follow"}}),
      el("button", {class: "round", html: icon("share", 18), attrs: {"aria-label": "Share"}}),
      el("button", {class: "round", html: icon("more", 18), attrs: {"aria-label": "More"}}),
    );
    // The extra buttons are part of the look; following or sharing does nothing here.
    actions.querySelectorAll("button:not(#hero-play)").forEach((b) => b.addEventListener("click", (e) => e.preventDefault()));
    const eyebrow = el("div", {class: "eyebrow", text: meta.toUpperCase()});
    if (track.live) {
      ui.listenersHero = el("span", {});
      eyebrow.append(el("span", {class: "live-pill", text: "LIVE"}), el("span", {text: "Now streaming  ·  "}), ui.listenersHero);
    }
    const text = el("div", {class: "hero-text"},
      eyebrow,
      el("h1", {text: cfg.episode_title || "Untitled episode"}),
      el("div", {class: "show-name", text: cfg.show || ""}),
      cfg.host ? el("div", {class: "host", text: cfg.host}) : null,
      cfg.description ? el("p", {class: "description", text: cfg.description}) : null,
      actions,
    );
    hero.append(art, text);
  }

  function buildEpisodePanel(cfg, track) {
    const panel = document.getElementById("episode-panel");
    const chapters = (cfg.chapters || []).slice().sort((a, b) => a.t - b.t);
    ui.chapters = [];
    if (chapters.length) {
      panel.append(el("h2", {text: "Chapters"}));
      const list = el("ol", {class: "chapters"});
      chapters.forEach((ch, k) => {
        const end = k + 1 < chapters.length ? chapters[k + 1].t : track.length;
        const row = el("li", {},
          el("span", {class: "ch-num", text: String(k + 1)}),
          el("span", {class: "ch-title", text: ch.title}),
          el("span", {class: "ch-len", text: clock(end - ch.t)}),
        );
        if (cfg.allow_seek !== false) row.addEventListener("click", () => track.seek(ch.t));
        list.append(row);
        ui.chapters.push({t: ch.t, row});
      });
      panel.append(list);
    }
    const more = cfg.more_episodes || [];
    if (more.length) {
      panel.append(el("h2", {class: chapters.length ? "second" : "", text: "More Episodes"}));
      const list = el("ul", {class: "episodes"});
      for (const ep of more) {
        list.append(el("li", {}, artwork(cfg.art, "", 40),
          el("div", {class: "ep-text"}, el("div", {class: "ep-title", text: ep.title}), el("div", {class: "ep-meta", text: ep.meta || ""}))));
      }
      panel.append(list);
    }
  }

  // ---- the panel on the right: answer, bookmark, poll or live chat -------------------------
  /** Functions called on every render with (episode position, wall clock). */
  const ticks = [];

  function setStatus(node, text, ok) {
    node.replaceChildren();
    if (ok) node.append(el("span", {html: icon("check", 16)}));
    node.append(text);
  }

  function buildAnswerPanel(ctx, cfg) {
    const answer = cfg.answer || {};
    const panel = document.getElementById("answer-panel");
    const several = Array.isArray(answer.fields) && answer.fields.length > 0;
    const fields = several ? answer.fields : [{field: answerField(ctx, answer), label: answer.label, placeholder: answer.placeholder}];
    panel.append(el("h2", {text: answer.title || "Answer"}));
    const inputs = fields.map((f) => {
      const input = el("input", {attrs: {id: several ? "answer-input-" + f.field : "answer-input", type: "text",
        autocomplete: "off", spellcheck: "false", placeholder: f.placeholder || answer.placeholder || "Type your answer"}});
      panel.append(el("label", {text: f.label || "Your answer", attrs: {for: input.id}}), input);
      return input;
    });
    if (several) panel.classList.add("several");
    ui.answerInput = inputs[0];
    ui.answerSubmit = el("button", {class: "submit", text: answer.button || "Submit", attrs: {id: "answer-submit"}});
    ui.answerStatus = el("div", {class: "answer-status", attrs: {id: "answer-status"}});
    panel.append(ui.answerSubmit, ui.answerStatus);
    let sent = false, closed = false;
    async function submit() {
      if (sent || closed) return;
      const texts = inputs.map((i) => i.value.trim());
      if (texts.some((t) => !t)) {
        ui.answerStatus.textContent = several ? "Fill in every box first." : "Type an answer first.";
        return;
      }
      sent = true;
      inputs.forEach((i) => { i.disabled = true; });
      ui.answerSubmit.disabled = true;
      setStatus(ui.answerStatus, " Answer submitted", true);
      if (!several) { await ctx.checkAnswer(fields[0].field, texts[0]); return; }
      const right = await Promise.all(fields.map((f, k) => ctx.grade(f.field, texts[k])));
      if (right.every(Boolean)) ctx.succeed(); else ctx.fail("wrong_answer");
    }
    ui.answerSubmit.addEventListener("click", submit);
    inputs.forEach((i) => i.addEventListener("keydown", (e) => { if (e.key === "Enter") submit(); }));
    if (answer.closes_at != null) {
      const countdown = el("div", {class: "countdown", attrs: {id: "answer-countdown"}});
      panel.insertBefore(countdown, panel.children[1]);
      ticks.push((p, now) => {
        if (sent || closed) return;
        const left = Math.max(0, Math.ceil(answer.closes_at - now));
        countdown.innerHTML = icon("clock", 14);
        countdown.append(" " + (answer.countdown || "Closes in") + " " + clock(left));
        countdown.classList.toggle("urgent", left <= 10);
      });
      ctx.at(answer.closes_at, () => {
        if (sent) return;
        closed = true;
        inputs.forEach((i) => { i.disabled = true; });
        ui.answerSubmit.disabled = true;
        countdown.textContent = answer.closed_text || "Closed";
        countdown.classList.add("closed");
        ctx.timeout();
      });
    }
  }

  function buildBookmarkPanel(ctx, cfg, track) {
    const b = cfg.bookmark;
    const field = answerField(ctx, b);
    const [from, to] = b.window;
    const panel = document.getElementById("answer-panel");
    panel.classList.add("bookmark-panel");
    const at = el("span", {class: "bm-time", attrs: {id: "bookmark-time"}});
    const input = el("input", {attrs: {id: "bookmark-title", type: "text", autocomplete: "off", spellcheck: "false",
      placeholder: b.placeholder || "Bookmark title"}});
    const add = el("button", {class: "submit", html: icon("bookmark", 16) + `<span></span>`, attrs: {id: "bookmark-add"}});
    add.querySelector("span").textContent = b.button || "Add bookmark";
    const status = el("div", {class: "answer-status", attrs: {id: "bookmark-status"}});
    const list = el("ul", {class: "bm-list"}, el("li", {class: "bm-empty", text: "No bookmarks in this episode yet."}));
    panel.append(
      el("h2", {text: b.title || "Bookmarks"}),
      el("div", {class: "bm-new"}, el("span", {html: icon("bookmark", 15)}), el("span", {text: b.label || "New bookmark at"}), at),
      input, add, status, list,
    );
    ticks.push((p) => { at.textContent = clock(p); });
    let sent = false;
    async function save() {
      if (sent) return;
      const title = input.value.trim();
      if (!title) { status.textContent = "Give the bookmark a title first."; return; }
      const p = track.position();
      sent = true;
      input.disabled = true;
      add.disabled = true;
      list.replaceChildren(el("li", {}, el("span", {class: "bm-at", text: clock(p)}), el("span", {class: "bm-title", text: title})));
      setStatus(status, " Bookmark added", true);
      if (p < from - 1e-3 || p >= to) { ctx.fail("wrong_moment"); return; }
      await ctx.checkAnswer(field, title);
    }
    add.addEventListener("click", save);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") save(); });
  }

  function buildPollPanel(ctx, cfg) {
    const poll = cfg.poll;
    const field = answerField(ctx, poll);
    const panel = document.getElementById("answer-panel");
    panel.classList.add("poll-panel");
    // The order of the options is drawn once, from the seed.
    const options = poll.options.slice();
    for (let i = options.length - 1; i > 0; i--) {
      const j = Math.floor(ctx.rng() * (i + 1));
      [options[i], options[j]] = [options[j], options[i]];
    }
    const body = el("div", {class: "poll-body"}, el("p", {class: "poll-empty", text: poll.empty_text || "No open poll right now."}));
    panel.append(el("h2", {}, el("span", {class: "h2-icon", html: icon("poll", 16)}), el("span", {text: poll.title || "Listener poll"})), body);
    let state = "waiting", closesAt = 0, countdown = null;
    function open(now) {
      state = "open";
      closesAt = now + (poll.open_s || 15);
      countdown = el("div", {class: "countdown", attrs: {id: "poll-countdown"}});
      const buttons = options.map((label) => {
        const button = el("button", {class: "poll-option", attrs: {"data-label": label}}, el("span", {class: "dot"}), el("span", {text: label}));
        button.addEventListener("click", () => vote(button, label));
        return button;
      });
      body.replaceChildren(el("p", {class: "poll-question", text: poll.question || ""}), ...buttons, countdown);
      ctx.at(closesAt, () => {
        if (state !== "open") return;
        state = "closed";
        // Closed: the options leave the page.
        body.replaceChildren(el("p", {class: "poll-empty", text: poll.closed_text || "This poll has closed."}));
        ctx.timeout();
      });
    }
    async function vote(button, label) {
      if (state !== "open") return;
      state = "voted";
      button.classList.add("chosen");
      body.querySelectorAll(".poll-option").forEach((b) => { b.disabled = true; });
      countdown.classList.remove("urgent");
      setStatus(countdown, " Vote recorded", true);
      await ctx.checkAnswer(field, label);
    }
    ticks.push((p, now) => {
      if (state === "waiting" && p >= poll.opens_at) open(now);
      if (state === "open") {
        const left = Math.max(0, Math.ceil(closesAt - now));
        countdown.innerHTML = icon("clock", 14);
        countdown.append(" " + (poll.countdown || "Closes in") + " " + clock(left));
        countdown.classList.toggle("urgent", left <= 5);
      }
    });
  }

  /** A colour for a chat handle: the same handle always gets the same colour. */
  function handleColor(handle) {
    let h = 0;
    for (const ch of handle) h = (h * 31 + ch.charCodeAt(0)) % 360;
    return `hsl(${h}, 55%, 45%)`;
  }

  function buildChatPanel(ctx, cfg, track) {
    const chat = cfg.chat;
    const field = answerField(ctx, chat);
    const panel = document.getElementById("answer-panel");
    panel.classList.add("chat-panel");
    const max = chat.max_messages || 4;
    ui.listenersChat = el("span", {class: "chat-count"});
    const list = el("ul", {class: "chat-list", attrs: {id: "chat-list"}});
    const replying = el("div", {class: "chat-replying", attrs: {id: "chat-replying"}});
    const input = el("input", {attrs: {id: "chat-input", type: "text", autocomplete: "off", spellcheck: "false",
      placeholder: chat.placeholder || "Say something nice"}});
    const send = el("button", {class: "chat-send", text: "Send", attrs: {id: "chat-send"}});
    panel.append(
      el("h2", {}, el("span", {text: chat.title || "Live chat"}), ui.listenersChat),
      list, replying, el("div", {class: "chat-form"}, input, send),
    );
    const comments = ctx.timeline
      .filter((i) => i.kind === "comment" && i.show)
      .map((i, k) => ({id: "c" + k, t: i.t, until: i.until, author: i.author || "listener", text: i.show}));
    const mine = [];
    const rows = new Map();
    let target = null, sent = false;

    function setTarget(c) {
      target = c;
      replying.replaceChildren();
      replying.classList.toggle("visible", Boolean(c));
      if (!c) return;
      const cancel = el("button", {class: "chat-cancel", html: icon("close", 14), attrs: {"aria-label": "Cancel reply"}});
      cancel.addEventListener("click", () => setTarget(null));
      replying.append(el("span", {html: icon("reply", 14)}), el("span", {text: "Replying to @" + c.author}), cancel);
      input.focus();
    }

    function row(c) {
      const avatar = el("span", {class: "chat-avatar", text: c.author.slice(0, 1).toUpperCase()});
      avatar.style.background = c.own ? "var(--accent)" : handleColor(c.author);
      const head = el("div", {class: "chat-head"}, el("span", {class: "chat-author", text: c.own ? "You" : "@" + c.author}));
      if (c.to) head.append(el("span", {class: "chat-to", text: "replying to @" + c.to}));
      const li = el("li", {class: "chat-msg" + (c.own ? " own" : ""), attrs: {"data-author": c.own ? "" : c.author}},
        avatar, el("div", {class: "chat-text"}, head, el("div", {class: "chat-body", text: c.text})));
      if (!c.own) {
        const reply = el("button", {class: "reply", html: icon("reply", 13) + "<span>Reply</span>", attrs: {"aria-label": "Reply to @" + c.author}});
        reply.addEventListener("click", () => setTarget(c));
        li.append(reply);
      }
      return li;
    }

    async function submit() {
      const text = input.value.trim();
      if (!text || sent) return;
      const p = track.position();
      input.value = "";
      mine.push({id: "m" + mine.length, t: p, own: true, author: "you", text, to: target ? target.author : ""});
      const to = target;
      setTarget(null);
      render(ctx, track);
      if (!to) return;  // a plain chat message decides nothing
      sent = true;
      input.disabled = true;
      send.disabled = true;
      if (to.author !== chat.reply_to) { ctx.fail("wrong_comment"); return; }
      await ctx.checkAnswer(field, text);
    }
    send.addEventListener("click", submit);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") submit(); });

    ticks.push((p) => {
      // Messages exist in the page only while they are in the chat's window.
      const shown = comments.filter((c) => c.t <= p && (c.until == null || p < c.until))
        .concat(mine).sort((a, b) => a.t - b.t).slice(-max);
      const ids = shown.map((c) => c.id).join(",");
      if (list.dataset.ids === ids) return;
      list.dataset.ids = ids;
      for (const [id, li] of rows) if (!shown.some((c) => c.id === id)) { li.remove(); rows.delete(id); }
      shown.forEach((c) => { if (!rows.has(c.id)) rows.set(c.id, row(c)); });
      list.replaceChildren(...shown.map((c) => rows.get(c.id)));
    });
  }

  function buildPlayer(cfg, track) {
    const bar = document.getElementById("player");
    ui.barPlay = el("button", {class: "play", attrs: {id: "play-pause", "aria-label": "Play"}});
    ui.back = el("button", {class: "skip", html: skipIcon("back", 15), attrs: {id: "skip-back", "aria-label": "Back 15 seconds"}});
    ui.fwd = el("button", {class: "skip", html: skipIcon("fwd", 30), attrs: {id: "skip-forward", "aria-label": "Forward 30 seconds"}});
    ui.elapsed = el("span", {class: "time", attrs: {id: "elapsed"}});
    ui.remaining = el("span", {class: "time right", attrs: {id: "remaining"}});
    ui.fill = el("div", {class: "fill"});
    ui.knob = el("div", {class: "knob"});
    ui.progress = el("div", {class: "progress", attrs: {id: "progress", role: "slider", "aria-label": "Episode position"}},
      el("div", {class: "rail"}, ui.fill), ui.knob);
    bar.append(
      el("div", {class: "now"}, artwork(cfg.art, "", 56),
        el("div", {class: "now-text"}, el("div", {class: "now-title", text: cfg.episode_title || ""}),
          el("div", {class: "now-show", text: cfg.show || ""}))),
      el("div", {class: "center"},
        el("div", {class: "buttons"}, ui.back, ui.barPlay, ui.fwd),
        el("div", {class: "scrub"}, ui.elapsed, ui.progress, ui.remaining)),
      el("div", {class: "right"}, el("span", {class: "speed", text: "1×"}), el("span", {html: icon("volume", 20)}),
        el("div", {class: "volume"}, el("div", {class: "volume-fill"}))),
    );
    if (track.live) {
      // A live stream: no skipping and no scrubbing, only the time it has been on air.
      ui.back.hidden = true;
      ui.fwd.hidden = true;
      ui.progress.classList.add("live");
      ui.knob.hidden = true;
      ui.remaining.replaceChildren(el("span", {class: "live-pill", text: "LIVE"}));
    }
    const seekable = cfg.allow_seek !== false && !track.live;
    ui.back.addEventListener("click", () => seekable && track.seek(track.position() - 15));
    ui.fwd.addEventListener("click", () => seekable && track.seek(track.position() + 30));
    ui.progress.addEventListener("click", (e) => {
      if (!seekable) return;
      const r = ui.progress.getBoundingClientRect();
      track.seek(((e.clientX - r.left) / r.width) * track.length);
    });
  }

  /** Bring every moving part in line with the episode position. */
  function render(ctx, track) {
    track.update();
    const p = track.position();
    const playing = track.playing;
    for (const b of [ui.barPlay, ui.heroPlay]) {
      b.classList.toggle("is-playing", playing);
      b.setAttribute("aria-label", playing ? "Pause" : "Play");
    }
    setHtml(ui.barPlay, icon(playing ? "pause" : "play", 26));
    setHtml(ui.heroPlay, icon(playing ? "pause" : "play", 18) + `<span>${playing ? "Pause" : "Play"}</span>`);
    ui.elapsed.textContent = clock(p);
    if (track.live) {
      ui.fill.style.width = "100%";
    } else {
      const frac = track.length ? p / track.length : 0;
      ui.fill.style.width = (frac * 100).toFixed(2) + "%";
      ui.knob.style.left = (frac * 100).toFixed(2) + "%";
      ui.remaining.textContent = "-" + clock(track.length - p);
    }

    let current = -1;
    ui.chapters.forEach((c, k) => { if (c.t <= p + 1e-3) current = k; });
    ui.chapters.forEach((c, k) => {
      c.row.classList.toggle("current", k === current);
      c.row.classList.toggle("playing", k === current && playing);
    });

    // Timeline content exists in the DOM only while it is on screen.
    const active = ctx.timeline.filter((item) => item.show && item.t <= p && (item.until == null || p < item.until));
    const note = active.filter((i) => !i.kind || i.kind === "art").pop();
    const noteText = note ? note.show : "";
    if (ui.artNote.textContent !== noteText) {
      ui.artNote.textContent = noteText;
      ui.artNote.classList.toggle("visible", Boolean(noteText));
    }
    const toasts = active.filter((i) => i.kind === "toast").map((i) => i.show);
    const box = document.getElementById("toasts");
    if (box.dataset.shown !== JSON.stringify(toasts)) {
      box.dataset.shown = JSON.stringify(toasts);
      box.replaceChildren(...toasts.map((text) => el("div", {class: "toast"}, el("span", {class: "toast-icon", html: icon("podcast", 16)}), el("span", {text}))));
    }
    const now = ctx.now();
    for (const tick of ticks) tick(p, now);
  }

  let track = null;

  function setListeners(count) {
    const text = count.toLocaleString("en-US") + " listening";
    if (ui.listenersHero) ui.listenersHero.textContent = text;
    if (ui.listenersChat) ui.listenersChat.textContent = text;
  }

  DynaCU.task({
    autoplayAudio: false,
    setup(ctx) {
      const cfg = ctx.config;
      document.title = (cfg.show ? cfg.show + " – " : "") + (cfg.app_name || "Podcasts");
      const length = cfg.length_s || ctx.episode.duration;
      const clips = ctx.audioClips.map((c, i) => ({index: i, at: c.t, duration: c.duration}));
      track = new Track(ctx, clips, length, cfg.live);
      buildSidebar(cfg);
      buildHero(ctx, cfg, track);
      buildEpisodePanel(cfg, track);
      if (cfg.chat) buildChatPanel(ctx, cfg, track);
      else if (cfg.poll) buildPollPanel(ctx, cfg);
      else if (cfg.bookmark) buildBookmarkPanel(ctx, cfg, track);
      else buildAnswerPanel(ctx, cfg);
      buildPlayer(cfg, track);
      if (track.live) setListeners(cfg.listeners || 0);
      const toggle = () => (track.playing ? track.pause() : track.play());
      ui.barPlay.addEventListener("click", () => { toggle(); render(ctx, track); });
      ui.heroPlay.addEventListener("click", () => { toggle(); render(ctx, track); });
      // Space toggles playback, as in desktop players, unless the agent is typing.
      document.addEventListener("keydown", (e) => {
        if (e.key === " " && e.target === document.body) { e.preventDefault(); toggle(); render(ctx, track); }
      });
      render(ctx, track);
    },
    start(ctx) {
      if (ctx.config.autoplay !== false) track.play();
      render(ctx, track);
      ctx.every(0.1, () => render(ctx, track));
      if (track.live && ctx.config.listeners) {
        // A live audience comes and goes: the count drifts by a few percent.
        let count = ctx.config.listeners;
        ctx.every(4, () => {
          count = Math.max(1, Math.round(count * (1 + (ctx.rng() - 0.42) * 0.04)));
          setListeners(count);
        });
      }
    },
  });
})();
