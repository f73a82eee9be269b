/* docs: a collaborative document editor with a call beside it.
 *
 * The document, the people and the call come from ctx.config; what collaborators do (their live
 * caret moving, typing, deleting, suggesting) comes from ctx.timeline; who is speaking comes from
 * ctx.audioClips (a clip's speaker lights up that person's tile). What is said is never written
 * on the page, and text a collaborator deletes leaves the DOM.
 *
 * [config]
 *   product      "Docs"                           the editor's name (window title)
 *   doc_title    "Spring offsite plan"            the file name in the top bar
 *   folder       "Team planning"                  shown beside the file name
 *   me           {name, initials, color}          the agent
 *   people       [{id, name, initials, color, role, muted}]
 *                                                 collaborators; id = the script speaker;
 *                                                 muted = true shows their microphone off
 *   call         {title, elapsed_s}               the call's name; its clock starts at elapsed_s
 *   heading      "Spring Offsite Plan"            the document's title line
 *   byline       "Owner: ... · Last edited ..."   the grey line under it
 *   sections     [{id, heading, text | paragraphs | items | checklist | table, input...}]
 *                  text/paragraphs: prose; items: a bulleted list; checklist: [{text, done,
 *                  who}] (who: a person id or "me", shown as an @chip). In any of these texts
 *                  "{ID|words}" marks a run of words a collaborator may later erase, replace or
 *                  suggest a change to (shown as plain words).
 *                  input = "FIELD": an editable line at the end of the section, checked with
 *                  ctx.grade(FIELD) when the agent presses Enter in it or its button;
 *                  placeholder, button ("Done"). mentions = ["F1", "F2"] instead of input: the
 *                  line is right when it mentions every field (ctx.gradeSpoken), e.g. a retyped
 *                  sentence that must hold a time.
 *                  tick = "FIELD" (checklist): ticking an open item's box is the answer: its
 *                  text is checked against FIELD; the list locks after one tick.
 *                  table = {columns = [...], rows = [[...], ...]}: a table; edit_col = N makes
 *                  that column's cells editable (Enter commits one cell; the table then locks);
 *                  input = "FIELD" checks the cell's text, row_field = "FIELD" the row's first
 *                  cell (wrong row: row_failure, default "wrong_cell"); placeholder.
 *                  failure: the named failure for a wrong answer here (default "wrong_answer").
 *   comments     [{who, section, text, time}]     comment cards already in the margin
 *   comment      {section, field | mentions = [...], placeholder, button, failure}
 *                                                 the agent's comment box in the margin, on a
 *                                                 section; "Comment" (or Enter) posts it; checked
 *                                                 like an input line
 *   review       {accept = "FIELD", reject = "FIELD", failure}
 *                                                 the suggestion cards' accept (check) and reject
 *                                                 (cross) buttons: the suggestion's key is checked
 *                                                 against that field; a button with no field is
 *                                                 the failure
 *   turns        [{field, expect, clip, window_s, ack_clip, failure}]
 *                  a back-and-forth on the call, in order. clip: index of the spoken line that
 *                  asks. expect = "speech": the agent answers aloud (the page listens, as a call
 *                  does; the agent's tile lights while it talks); the window opens when the clip
 *                  ends and the first utterance heard in it must mention FIELD (ctx.gradeSpoken; a
 *                  near miss or anything else is the failure); no start of speech within
 *                  window_s is "timeout" (an answer begun in time may finish). expect = "doc":
 *                  the control whose field is FIELD must be answered by window_s after the clip
 *                  ends (earlier is fine). ack_clip: a spoken line played once the turn is
 *                  answered right (not at its script time). With turns, the episode succeeds
 *                  once every turn is answered; without, once every control is. Any wrong
 *                  answer ends it at once with its failure.
 *
 * [[script]] lines the page reads (ctx.timeline), all by `who` (a person id):
 *   cursor = "SECTION" or "SECTION.N"   move the caret to the end of block N of the section
 *                                       (its last block when N is absent; "SECTION.input" is
 *                                       the section's editable line, "SECTION.rRcC" a table cell,
 *                                       row R of the body and column C, both from 0)
 *   type = "text"                       then type this text there, `cps` characters a second
 *                                       (default 9); id = "RUN" makes what is typed a run
 *   mark = true                         with cursor = "X.input" or a cell: keep it marked in the
 *                                       person's colour (until `until`, or the person moves on)
 *   erase = "RUN"                       the caret goes to the end of the run and deletes it
 *                                       character by character (`cps`, default 14); it leaves
 *                                       the DOM
 *   replace = "RUN", type = "text"      select the run, then type the new text in its place
 *   suggest = "RUN", type = "text"      suggesting mode: the run is struck through, the new text
 *                                       typed after it in the person's colour, and a suggestion
 *                                       card ("Replace ... with ...") appears in the margin; key
 *                                       (default the typed text) is what the review checks
 *   delete = "SECTION.N"                select a whole line (block N), then delete it
 *   tick = "SECTION.N"                  tick a checklist item
 *   add = "SECTION", type = "text"      start a new item at the end of the section's list and
 *                                       type it (it becomes the section's next block)
 */
(function () {
  "use strict";
  const {el, initials} = DynaCU.ui;
  function fmt(s) { return DynaCU.ui.clock(s, {pad: true}); }  // a call's length

  const ICON = {
    doc: '<svg viewBox="0 0 28 36" aria-hidden="true"><path d="M0 3a3 3 0 0 1 3-3h15l10 10v23a3 3 0 0 1-3 3H3a3 3 0 0 1-3-3z" fill="#4285f4"/><path d="M18 0v7a3 3 0 0 0 3 3h7z" fill="#a1c2fa"/><rect x="6" y="16" width="16" height="2.2" rx="1" fill="#fff"/><rect x="6" y="21" width="16" height="2.2" rx="1" fill="#fff"/><rect x="6" y="26" width="11" height="2.2" rx="1" fill="#fff"/></svg>',
    star: '<svg viewBox="0 0 24 24"><path d="m12 3 2.7 5.6 6.1.9-4.4 4.3 1 6.1L12 17l-5.4 2.9 1-6.1-4.4-4.3 6.1-.9z" fill="none" stroke="currentColor" stroke-width="1.6" stroke-linejoin="round"/></svg>',
    cloud: '<svg viewBox="0 0 24 24"><path d="M7 18h10a4 4 0 0 0 .6-8A6 6 0 0 0 6.3 9.2 4.5 4.5 0 0 0 7 18z" fill="none" stroke="currentColor" stroke-width="1.6"/><path d="m9.5 13.5 2 2 3.5-3.5" fill="none" stroke="currentColor" stroke-width="1.6"/></svg>',
    undo: '<svg viewBox="0 0 24 24"><path d="M9 4 4 9l5 5M4 9h10a6 6 0 0 1 0 12" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>',
    redo: '<svg viewBox="0 0 24 24"><path d="M15 4l5 5-5 5M20 9H10a6 6 0 0 0 0 12" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>',
    print: '<svg viewBox="0 0 24 24"><path d="M7 9V4h10v5M7 17H4v-7h16v7h-3M7 14h10v6H7z" fill="none" stroke="currentColor" stroke-width="1.7"/></svg>',
    link: '<svg viewBox="0 0 24 24"><path d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>',
    comment: '<svg viewBox="0 0 24 24"><path d="M4 4h16v12H8l-4 4z" fill="none" stroke="currentColor" stroke-width="1.7" stroke-linejoin="round"/><path d="M12 7v6M9 10h6" stroke="currentColor" stroke-width="1.7"/></svg>',
    image: '<svg viewBox="0 0 24 24"><rect x="3" y="5" width="18" height="14" rx="2" fill="none" stroke="currentColor" stroke-width="1.7"/><path d="m5 17 5-5 3 3 2-2 4 4" fill="none" stroke="currentColor" stroke-width="1.7"/></svg>',
    align: '<svg viewBox="0 0 24 24"><path d="M4 6h16M4 10h10M4 14h16M4 18h10" stroke="currentColor" stroke-width="1.8"/></svg>',
    bullets: '<svg viewBox="0 0 24 24"><circle cx="5" cy="7" r="1.6" fill="currentColor"/><circle cx="5" cy="12" r="1.6" fill="currentColor"/><circle cx="5" cy="17" r="1.6" fill="currentColor"/><path d="M9 7h11M9 12h11M9 17h11" stroke="currentColor" stroke-width="1.8"/></svg>',
    checklist: '<svg viewBox="0 0 24 24"><path d="m3 7 2 2 3-4M3 16l2 2 3-4M11 7h10M11 16h10" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>',
    indent: '<svg viewBox="0 0 24 24"><path d="M4 5h16M10 10h10M10 14h10M4 19h16M4 9l3 3-3 3" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>',
    pen: '<svg viewBox="0 0 24 24"><path d="m4 20 1-4L16 5l3 3L8 19z" fill="none" stroke="currentColor" stroke-width="1.7" stroke-linejoin="round"/></svg>',
    mic: '<svg viewBox="0 0 24 24"><rect x="9" y="3" width="6" height="11" rx="3" fill="currentColor"/><path d="M6 11a6 6 0 0 0 12 0M12 17v3" fill="none" stroke="currentColor" stroke-width="1.8"/></svg>',
    micOff: '<svg viewBox="0 0 24 24"><rect x="9" y="3" width="6" height="11" rx="3" fill="currentColor"/><path d="M6 11a6 6 0 0 0 12 0M12 17v3" fill="none" stroke="currentColor" stroke-width="1.8"/><path d="M4 4l16 16" stroke="#ea4335" stroke-width="2.2"/></svg>',
    cam: '<svg viewBox="0 0 24 24"><rect x="3" y="7" width="12" height="10" rx="2" fill="currentColor"/><path d="m15 11 6-3v8l-6-3z" fill="currentColor"/></svg>',
    present: '<svg viewBox="0 0 24 24"><rect x="3" y="4" width="18" height="13" rx="2" fill="none" stroke="currentColor" stroke-width="1.8"/><path d="M12 14V8M9 10.5 12 7.5l3 3" fill="none" stroke="currentColor" stroke-width="1.8"/><path d="M8 20h8" stroke="currentColor" stroke-width="1.8"/></svg>',
    hangup: '<svg viewBox="0 0 24 24"><path d="M3 14c5-5 13-5 18 0l-2.5 2.5-3.5-1.5v-2.5a11 11 0 0 0-6 0V15l-3.5 1.5z" fill="currentColor"/></svg>',
    check: '<svg viewBox="0 0 24 24"><path d="m5 12.5 4.5 4.5L19 7.5" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round"/></svg>',
    lock: '<svg viewBox="0 0 24 24"><rect x="5" y="10" width="14" height="10" rx="2" fill="currentColor"/><path d="M8 10V7a4 4 0 0 1 8 0v3" stroke="currentColor" stroke-width="2" fill="none"/></svg>',
  };

  ICON.close = '<svg viewBox="0 0 24 24"><path d="m6 6 12 12M18 6 6 18" fill="none" stroke="currentColor" stroke-width="2.2" stroke-linecap="round"/></svg>';

  const icon = (name, cls) => el("span.ic" + (cls ? "." + cls : ""), {html: ICON[name]});

  const state = {
    ctx: null, people: {}, blocks: {}, runs: {}, carets: {}, lists: {},
    controls: [],      // the agent's ways to answer: {key, spec, lock()}
    done: new Set(),   // keys of controls answered right
    turns: [],         // the call's back-and-forth (config.turns), with their windows
    open: null,        // the speech turn whose answer window is open
    cards: [],         // margin cards: {node, anchor}
  };

  function person(id) {
    if (id === "me") return state.me;
    return state.people[id] || {id, name: id, initials: id.slice(0, 2).toUpperCase(), color: "#9334e6"};
  }
  const firstName = (p) => p.name.split(" ")[0];

  /** Text of a node without the collaborators' carets (their name flags are text too). */
  function plainText(node) {
    const copy = node.cloneNode(true);
    for (const c of copy.querySelectorAll(".dx-caret")) c.remove();
    return copy.textContent.replace(/\s+/g, " ").trim();
  }

  /** Append text to parent, turning each "{ID|words}" into a run a collaborator can edit. */
  function rich(parent, text) {
    const re = /\{([A-Za-z0-9_-]+)\|([^{}]*)\}/g;
    let last = 0, m;
    while ((m = re.exec(text))) {
      if (m.index > last) parent.append(text.slice(last, m.index));
      const run = el("span.dx-run", {"data-run": m[1], text: m[2]});
      state.runs[m[1]] = run;
      parent.append(run);
      last = re.lastIndex;
    }
    if (last < text.length) parent.append(text.slice(last));
    return parent;
  }
  const bare = (text) => String(text).replace(/\{[A-Za-z0-9_-]+\|([^{}]*)\}/g, "$1");

  // ---- page ---------------------------------------------------------------------------------

  function build(ctx) {
    const cfg = ctx.config;
    state.me = Object.assign({id: "me", name: "You", initials: "ME", color: "#1a73e8"}, cfg.me || {});
    for (const p of cfg.people || []) state.people[p.id] = Object.assign({initials: initials(p.name)}, p);
    document.title = (cfg.doc_title || "Untitled document") + " - " + (cfg.product || "Docs");
    const app = document.getElementById("app");
    app.append(buildTopBar(cfg), buildToolbar(), el("div.dx-body", {}, [buildCanvas(cfg, ctx), buildCall(cfg)]));
  }

  function avatar(p, cls) {
    const node = el("span.dx-av" + (cls ? "." + cls : ""), {text: p.initials, title: p.name});
    node.style.background = p.color;
    return node;
  }

  function buildTopBar(cfg) {
    const menus = ["File", "Edit", "View", "Insert", "Format", "Tools", "Extensions", "Help"];
    const others = Object.values(state.people);
    return el("header.dx-top", {}, [
      el("span.dx-logo", {html: ICON.doc}),
      el("div.dx-titles", {}, [
        el("div.dx-name-row", {}, [
          el("span.dx-name", {text: cfg.doc_title || "Untitled document"}),
          icon("star", "dim"),
          cfg.folder && el("span.dx-folder", {text: cfg.folder}),
          el("span.dx-saved", {}, [icon("cloud"), el("span", {text: "Saved to Drive"})]),
        ]),
        el("nav.dx-menu", {}, menus.map((m) => el("span", {text: m}))),
      ]),
      el("div.dx-top-right", {}, [
        el("div.dx-presence", {}, others.map((p) => {
          const a = avatar(p, "presence");
          a.dataset.person = p.id;
          return a;
        })),
        el("button.dx-share", {}, [icon("lock"), el("span", {text: "Share"})]),
        avatar(state.me, "me"),
      ]),
    ]);
  }

  function buildToolbar() {
    const sep = () => el("span.dx-sep");
    const btn = (name) => el("span.dx-tb", {}, [icon(name)]);
    const glyph = (text, cls) => el("span.dx-tb.glyph" + (cls ? "." + cls : ""), {text});
    const drop = (text, w) => el("span.dx-drop", {text, style: "width:" + w + "px"});
    const suggesting = state.ctx.timeline.some((l) => l.suggest);
    return el("div.dx-toolbar", {}, [
      btn("undo"), btn("redo"), btn("print"), btn("pen"), sep(),
      drop("100%", 62), sep(), drop("Normal text", 110), sep(), drop("Arial", 84), sep(),
      el("span.dx-size", {}, [el("span", {text: "\u2212"}), el("b", {text: "11"}), el("span", {text: "+"})]), sep(),
      glyph("B", "b"), glyph("I", "i"), glyph("U", "u"), glyph("A", "color"), sep(),
      btn("link"), btn("comment"), btn("image"), sep(),
      btn("align"), btn("checklist"), btn("bullets"), btn("indent"),
      el("span.dx-mode", {}, [icon("pen"), el("span", {text: suggesting ? "Editing \u00b7 others suggesting" : "Editing"})]),
    ]);
  }

  function hasMargin(cfg, ctx) {
    return Boolean(cfg.comment || (cfg.comments || []).length || ctx.timeline.some((l) => l.suggest));
  }

  function buildCanvas(cfg, ctx) {
    const page = el("article.dx-page", {id: "page"}, [
      el("h1.dx-h1", {text: cfg.heading || cfg.doc_title || ""}),
      cfg.byline && el("p.dx-byline", {text: cfg.byline}),
    ]);
    for (const s of cfg.sections || []) page.append(buildSection(s));
    const canvas = el("div.dx-canvas", {id: "canvas"}, [el("div.dx-ruler"), page]);
    if (hasMargin(cfg, ctx)) {
      canvas.classList.add("with-margin");
      canvas.append(el("div.dx-margin", {id: "margin"}));
    }
    return canvas;
  }

  function buildSection(s) {
    const blocks = [];
    const box = el("section.dx-sec", {"data-section": s.id}, [s.heading && el("h2", {text: s.heading})]);
    const paragraphs = s.paragraphs || (s.text ? [s.text] : []);
    for (const text of paragraphs) {
      const p = rich(el("p"), text);
      blocks.push(p);
      box.append(p);
    }
    if (s.items) {
      const ul = el("ul", {}, s.items.map((text) => { const li = rich(el("li"), text); blocks.push(li); return li; }));
      state.lists[s.id] = {ul, kind: "items", section: s};
      box.append(ul);
    }
    if (s.table) {
      box.append(buildTable(s));
    } else if (s.checklist || s.input || s.mentions) {
      const ul = el("ul.dx-check", {}, []);
      state.lists[s.id] = {ul, kind: "check", section: s};
      for (const item of s.checklist || []) {
        const li = checkItem(s, item.text, item.done);
        if (item.who) li.append(chip(person(item.who)));
        blocks.push(li.querySelector(".t"));
        ul.append(li);
      }
      if (s.input || s.mentions) ul.append(buildInput(s));
      box.append(ul);
      if (s.tick) addControl(s.tick, s, (locked) => { state.lists[s.id].locked = locked; });
    }
    state.blocks[s.id + "#count"] = blocks.length;
    blocks.forEach((b, i) => { state.blocks[s.id + "." + i] = b; });
    if (blocks.length) state.blocks[s.id] = blocks[blocks.length - 1];
    return box;
  }

  function checkItem(s, text, done) {
    const t = rich(el("span.t"), text || "");
    const box = el("span.box", {}, [done ? icon("check") : null]);
    const li = el("li" + (done ? ".done" : ""), {"data-item": bare(text || "")}, [box, t]);
    if (s.tick) {
      box.classList.add("tickable");
      box.addEventListener("click", () => agentTick(s, li));
    }
    return li;
  }

  function chip(p) {
    const c = el("span.dx-chip", {text: "@" + firstName(p)});
    c.style.setProperty("--who", p.color);
    return c;
  }

  function buildTable(s) {
    const cols = s.table.columns || [];
    const head = el("tr", {}, cols.map((c) => el("th", {text: c})));
    const body = (s.table.rows || []).map((row, r) => {
      const tr = el("tr", {"data-row": bare(row[0] || "")});
      row.forEach((value, c) => {
        const td = rich(el("td.c" + c), String(value));
        state.blocks[s.id + ".r" + r + "c" + c] = td;
        if (s.edit_col === c) makeCellEditable(s, td, tr);
        tr.append(td);
      });
      return tr;
    });
    const table = el("table.dx-table", {"data-section": s.id}, [el("thead", {}, [head]), el("tbody", {}, body)]);
    if (s.input) addControl(s.input, s, (locked) => {
      for (const td of table.querySelectorAll("td.editable")) td.setAttribute("contenteditable", locked ? "false" : "plaintext-only");
      table.classList.toggle("locked", locked);
    });
    return table;
  }

  function makeCellEditable(s, td, tr) {
    td.classList.add("editable");
    td.setAttribute("contenteditable", "plaintext-only");
    td.setAttribute("spellcheck", "false");
    td.setAttribute("role", "textbox");
    td.setAttribute("aria-label", (s.table.columns || [])[s.edit_col] || "cell");
    if (s.placeholder) td.dataset.placeholder = s.placeholder;
    td.addEventListener("keydown", (e) => {
      if (e.key !== "Enter") return;
      e.preventDefault();
      const text = plainText(td);
      if (!text) return;
      td.blur();
      td.classList.add("committed");
      const row = plainText(tr.firstElementChild);
      answer(s.input, text, row);
    });
  }

  function buildInput(s) {
    const edit = el("div.dx-edit", {
      contenteditable: "plaintext-only", role: "textbox", "aria-label": s.heading || "new item",
      "data-placeholder": s.placeholder || "Type here", spellcheck: "false",
    });
    const button = el("button.dx-done", {type: "button"}, [icon("check"), el("span", {text: s.button || "Done"})]);
    const row = el("li.dx-input", {"data-section": s.id}, [el("span.box"), edit, button]);
    const key = s.input || s.mentions[0];
    addControl(key, s, (locked) => {
      edit.setAttribute("contenteditable", locked ? "false" : "plaintext-only");
      row.classList.toggle("locked", locked);
      if (locked) row.classList.remove("marked");
      button.disabled = locked;
    });
    state.blocks[s.id + ".input"] = row;
    edit.addEventListener("input", () => { if (!edit.textContent) edit.innerHTML = ""; });
    const commit = () => { const text = plainText(edit); if (text) answer(key, text); };
    edit.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); commit(); }
    });
    button.addEventListener("click", commit);
    return row;
  }

  function buildCall(cfg) {
    const call = cfg.call || {};
    const tiles = Object.values(state.people).map((p) => tile(p, false));
    tiles.push(tile(state.me, true));
    const clock = el("span.dx-clock", {id: "call-clock", text: fmt(call.elapsed_s || 0)});
    return el("aside.dx-call", {}, [
      el("div.dx-call-head", {}, [
        el("span.live"),
        el("span.dx-call-title", {text: call.title || "Call"}),
        clock,
      ]),
      el("div.dx-tiles" + (tiles.length > 2 ? ".many" : ""), {}, tiles),
      el("div.dx-call-status", {id: "call-status"}),
      el("div.dx-call-bar", {}, [
        el("span.cb", {id: "my-mic"}, [icon("micOff")]),
        el("span.cb", {}, [icon("cam")]),
        el("span.cb", {}, [icon("present")]),
        el("span.cb.leave", {}, [icon("hangup")]),
      ]),
    ]);
  }

  function tile(p, isMe) {
    const a = el("span.dx-tile-av", {text: p.initials});
    a.style.background = p.color;
    const t = el("div.dx-tile" + (isMe ? ".me" : ""), {"data-person": p.id, id: isMe ? "my-tile" : null}, [
      el("div.ring", {}, [a]),
      el("div.dx-tile-name", {}, [
        el("span.lvl", {}, [el("i"), el("i"), el("i")]),
        el("span", {text: isMe ? p.name + " (you)" : p.name}),
      ]),
      isMe || p.muted ? el("span.dx-tile-mic.off", {}, [icon("micOff")]) : null,
    ]);
    t.style.setProperty("--who", p.color);
    return t;
  }

  // ---- the margin: comments and suggestions -------------------------------------------------

  function card(anchor, who, time, body, cls) {
    const p = person(who);
    const node = el("div.dx-card" + (cls ? "." + cls : ""), {}, [
      el("div.dx-card-head", {}, [avatar(p, "small"), el("div.dx-card-who", {}, [
        el("b", {text: p.name}), el("span", {text: time || "Just now"}),
      ]), el("span.dx-card-tools")]),
      ...body,
    ]);
    state.cards.push({node, anchor});
    document.getElementById("margin").append(node);
    layoutCards();
    return node;
  }

  function dropCard(node) {
    state.cards = state.cards.filter((c) => c.node !== node);
    node.remove();
    layoutCards();
  }

  /** Cards sit beside what they are about, pushed down so that none overlaps another. */
  function layoutCards() {
    const margin = document.getElementById("margin");
    if (!margin) return;
    const top0 = margin.getBoundingClientRect().top;
    const placed = state.cards
      .map((c) => ({c, want: c.anchor && c.anchor.isConnected ? c.anchor.getBoundingClientRect().top - top0 - 6 : 0}))
      .sort((a, b) => a.want - b.want);
    let floor = 0;
    for (const {c, want} of placed) {
      const top = Math.max(want, floor);
      c.node.style.top = top + "px";
      floor = top + c.node.offsetHeight + 8;
    }
  }

  function buildComments(cfg) {
    const review = cfg.review;
    if (review && review.accept) addControl(review.accept, review, () => {});
    if (review && review.reject) addControl(review.reject, review, () => {});
    for (const c of cfg.comments || []) {
      const anchor = document.querySelector('.dx-sec[data-section="' + c.section + '"] h2');
      if (anchor) anchor.classList.add("dx-anchored");
      card(anchor, c.who, c.time, [el("div.dx-card-text", {text: c.text})]);
    }
    const spec = cfg.comment;
    if (!spec) return;
    const anchor = document.querySelector('.dx-sec[data-section="' + spec.section + '"] h2');
    if (anchor) anchor.classList.add("dx-anchored", "mine");
    const edit = el("div.dx-cm-edit", {
      contenteditable: "plaintext-only", role: "textbox", "aria-label": "Comment",
      "data-placeholder": spec.placeholder || "Comment or add others with @", spellcheck: "false",
    });
    const post = el("button.dx-cm-post", {type: "button", text: spec.button || "Comment"});
    const cancel = el("button.dx-cm-cancel", {type: "button", text: "Cancel"});
    const node = card(anchor, "me", "Draft", [edit, el("div.dx-cm-actions", {}, [cancel, post])], "composer");
    node.id = "comment-box";
    const key = spec.field || spec.mentions[0];
    addControl(key, spec, (locked) => {
      edit.setAttribute("contenteditable", locked ? "false" : "plaintext-only");
      node.classList.toggle("posted", locked);
      if (locked) node.querySelector(".dx-card-who span").textContent = "Just now";
    });
    edit.addEventListener("input", () => { if (!edit.textContent) edit.innerHTML = ""; layoutCards(); });
    const commit = () => { const text = plainText(edit); if (text) answer(key, text); };
    edit.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); commit(); }
    });
    post.addEventListener("click", commit);
    cancel.addEventListener("click", () => { edit.innerHTML = ""; });
  }

  // ---- collaborators ------------------------------------------------------------------------

  function caretOf(who) {
    if (!state.carets[who]) {
      const p = person(who);
      const c = el("span.dx-caret", {contenteditable: "false"}, [el("span.flag", {text: firstName(p)})]);
      c.style.setProperty("--who", p.color);
      state.carets[who] = c;
    }
    return state.carets[who];
  }

  function unmark(who) {
    for (const node of document.querySelectorAll(".marked")) {
      if (node.dataset.markedBy === who) { node.classList.remove("marked"); node.style.removeProperty("--who"); }
    }
  }

  function placeCaret(who, where, after) {
    const caret = caretOf(who);
    if (after) where.after(caret);
    else where.append(caret);
    caret.classList.remove("blink");
    void caret.offsetWidth;
    caret.classList.add("blink");
    return caret;
  }

  function moveCaret(line) {
    const target = state.blocks[line.cursor];
    if (!target || !target.isConnected) return null;
    const p = person(line.who);
    unmark(line.who);
    if (target.classList.contains("dx-input")) {
      target.querySelector(".box").after(caretOf(line.who));
      placeCaret(line.who, target.querySelector(".box"), true);
    } else {
      placeCaret(line.who, target, false);
    }
    if (line.mark) {
      target.classList.add("marked");
      target.dataset.markedBy = line.who;
      target.style.setProperty("--who", p.color);
      if (line.until != null) setTimeout(() => target.classList.remove("marked"), Math.max(0, line.until - state.ctx.now()) * 1000);
    }
    return target;
  }

  /** Type `text` into `node` (a text node or element) at `cps`, in a person's rhythm. */
  function typeText(who, node, text, cps, done) {
    const caret = caretOf(who);
    const textNode = node.nodeType === 3 ? node : node.appendChild(document.createTextNode(""));
    let i = 0;
    const tick = () => {
      if (state.ctx.result !== "pending") return;
      if (i >= text.length) { setTimeout(() => caret.classList.remove("typing"), 400); if (done) done(); return; }
      textNode.data += text[i++];
      caret.classList.add("typing");
      // Human rhythm: a little slower after spaces and punctuation.
      const pause = /[\s,.;]/.test(text[i - 1]) ? 1.6 : 1;
      setTimeout(tick, (1000 / cps) * pause * (0.7 + 0.6 * state.ctx.rng()));
    };
    tick();
  }

  function typeAt(line) {
    const caret = caretOf(line.who);
    let node;
    if (line.id) {
      node = el("span.dx-run", {"data-run": line.id});
      state.runs[line.id] = node;
    } else {
      node = document.createTextNode("");
    }
    caret.before(node);
    typeText(line.who, node, String(line.type), line.cps || 9);
  }

  /** Delete a run backwards, one character at a time; it leaves the DOM when empty. */
  function erase(line) {
    const run = state.runs[line.erase];
    if (!run || !run.isConnected) return;
    unmark(line.who);
    const caret = placeCaret(line.who, run, true);
    const cps = line.cps || 14;
    caret.classList.add("typing");
    const tick = () => {
      if (run.textContent.length > 1) {
        run.textContent = run.textContent.slice(0, -1);
        setTimeout(tick, (1000 / cps) * (0.8 + 0.4 * state.ctx.rng()));
      } else {
        run.remove();
        delete state.runs[line.erase];
        caret.classList.remove("typing");
      }
    };
    tick();
  }

  function select(node, who) {
    node.classList.add("dx-sel");
    node.style.setProperty("--who", person(who).color);
  }

  function replace(line) {
    const run = state.runs[line.replace];
    if (!run || !run.isConnected) return;
    unmark(line.who);
    placeCaret(line.who, run, true);
    select(run, line.who);
    setTimeout(() => {
      run.classList.remove("dx-sel");
      run.textContent = "";
      run.after(caretOf(line.who));
      typeText(line.who, run, String(line.type), line.cps || 9);
    }, 800);
  }

  function deleteBlock(line) {
    const block = state.blocks[line.delete];
    if (!block || !block.isConnected) return;
    unmark(line.who);
    const line_ = block.closest("li") || block;
    placeCaret(line.who, block, false);
    select(line_, line.who);
    setTimeout(() => {
      const prev = line_.previousElementSibling || line_.parentElement.previousElementSibling;
      line_.remove();
      delete state.blocks[line.delete];
      if (prev) placeCaret(line.who, prev.matches("ul") ? prev.lastElementChild || prev : prev, false);
    }, 900);
  }

  function collaboratorTick(line) {
    const block = state.blocks[line.tick];
    const li = block && block.closest("li");
    if (!li) return;
    unmark(line.who);
    placeCaret(line.who, block, false);
    li.classList.add("done");
    const box = li.querySelector(".box");
    box.classList.remove("tickable");
    box.replaceChildren(icon("check"));
  }

  function addItem(line) {
    const list = state.lists[line.add];
    if (!list) return;
    unmark(line.who);
    const n = state.blocks[line.add + "#count"] || 0;
    let li, target;
    if (list.kind === "check") {
      li = checkItem(list.section, "", false);
      if (list.locked) li.querySelector(".box").classList.remove("tickable");
      target = li.querySelector(".t");
      const input = list.ul.querySelector(".dx-input");
      list.ul.insertBefore(li, input);
    } else {
      li = el("li");
      target = li;
      list.ul.append(li);
    }
    state.blocks[line.add + "." + n] = target;
    state.blocks[line.add] = target;
    state.blocks[line.add + "#count"] = n + 1;
    placeCaret(line.who, target, false);
    typeText(line.who, target.insertBefore(document.createTextNode(""), caretOf(line.who)), String(line.type), line.cps || 9, () => {
      li.dataset.item = plainText(target);
    });
  }

  function suggest(line) {
    const run = state.runs[line.suggest];
    if (!run || !run.isConnected) return;
    const p = person(line.who);
    unmark(line.who);
    run.classList.add("dx-del");
    run.style.setProperty("--who", p.color);
    const ins = el("span.dx-ins");
    ins.style.setProperty("--who", p.color);
    run.after(ins);
    ins.after(caretOf(line.who));
    placeCaret(line.who, ins, true);
    const key = line.key || line.type;
    typeText(line.who, ins, String(line.type), line.cps || 9, () => {
      const old = el("span.old", {text: "\u201c" + run.textContent + "\u201d"});
      const neu = el("span.new", {text: "\u201c" + ins.textContent + "\u201d"});
      neu.style.setProperty("--who", p.color);
      const ok = el("button.ok", {type: "button", title: "Accept suggestion", "aria-label": "Accept suggestion"}, [icon("check")]);
      const no = el("button.no", {type: "button", title: "Reject suggestion", "aria-label": "Reject suggestion"}, [icon("close")]);
      const node = card(run, line.who, "Just now", [el("div.dx-card-text", {}, [el("b", {text: "Replace: "}), old, el("span", {text: " with "}), neu])], "sugg");
      node.dataset.key = key;
      node.querySelector(".dx-card-tools").append(ok, no);
      const decide = (accepted) => {
        if (accepted) { run.remove(); ins.classList.remove("dx-ins"); ins.style.removeProperty("--who"); }
        else { ins.remove(); run.classList.remove("dx-del"); run.style.removeProperty("--who"); }
        dropCard(node);
        // Each button answers its field once; a second decision of the same kind (or a button
        // the task gives no field) is a mistake.
        const review = state.ctx.config.review || {};
        const field = accepted ? review.accept : review.reject;
        const control = field && state.controls.find((c) => c.key === field);
        if (!control || control.locked) { state.ctx.fail(review.failure || "wrong_answer"); return; }
        answer(field, key);
      };
      ok.addEventListener("click", () => decide(true));
      no.addEventListener("click", () => decide(false));
    });
  }

  function play(line) {
    if (!line.who) return;
    if (line.erase) return erase(line);
    if (line.replace) return replace(line);
    if (line.suggest) return suggest(line);
    if (line.delete) return deleteBlock(line);
    if (line.tick) return collaboratorTick(line);
    if (line.add) return addItem(line);
    if (!line.cursor) return;
    const target = moveCaret(line);
    if (target && line.type) typeAt(line);
  }

  function speaking(speaker, on) {
    for (const node of document.querySelectorAll('[data-person="' + speaker + '"]')) {
      node.classList.toggle("speaking", on);
    }
  }

  // ---- the agent's answers ------------------------------------------------------------------

  /** Register a control: an answer the page expects, under the key of its (first) field. */
  function addControl(key, spec, lock) {
    state.controls.push({key, spec, lock, locked: false});
  }

  function agentTick(s, li) {
    const list = state.lists[s.id];
    if (list.locked || li.classList.contains("done") || !li.dataset.item) return;
    li.classList.add("done");
    li.querySelector(".box").replaceChildren(icon("check"));
    answer(s.tick, li.dataset.item);
  }

  /** Is the agent's text right for this control? true, or the failure's name. */
  async function judge(spec, key, text, row) {
    const ctx = state.ctx;
    const failure = spec.failure || "wrong_answer";
    // Every part is graded, so a checklist credits the parts that are right.
    const rowOk = spec.row_field ? await ctx.grade(spec.row_field, row || "") : true;
    let ok = true;
    if (spec.mentions) {
      for (const field of spec.mentions) ok = (await ctx.gradeSpoken(field, text)) === "accepted" && ok;
    } else ok = await ctx.grade(key, text);
    if (!rowOk) return spec.row_failure || "wrong_cell";
    return ok ? true : failure;
  }

  async function answer(key, text, row) {
    const control = state.controls.find((c) => c.key === key);
    if (!control || control.locked || state.ctx.result !== "pending") return;
    control.locked = true;
    control.lock(true);
    const verdict = await judge(control.spec, key, text, row);
    if (verdict !== true) { state.ctx.fail(verdict); return; }
    answered(key);
  }

  /** A right answer: end the turn it belongs to; success once everything asked is answered. */
  function answered(key) {
    const ctx = state.ctx;
    state.done.add(key);
    let end = ctx.now();
    if (state.turns.length) {
      const turn = state.turns.find((t) => t.field === key && !t.done);
      if (turn) {
        turn.done = true;
        if (turn.ack_clip !== undefined) end = playClip(turn.ack_clip, 0.4);
      }
      if (state.turns.every((t) => t.done)) ctx.at(end + 0.2, () => ctx.succeed());
      return;
    }
    if (state.controls.every((c) => state.done.has(c.key))) ctx.succeed();
  }

  // ---- the call: clips, turns and listening -------------------------------------------------

  /** Play clip i after `delay` s, lighting its speaker's tile; returns when it ends. */
  function playClip(i, delay) {
    const ctx = state.ctx;
    const clip = ctx.audioClips[i];
    ctx.playClip(i, delay);
    const from = ctx.now() + delay;
    const until = from + clip.duration;
    // Own timers: a tile must stop lighting even once the episode is decided.
    setTimeout(() => { speaking(clip.speaker, true); status(); }, delay * 1000);
    setTimeout(() => { speaking(clip.speaker, false); status(); }, (delay + clip.duration) * 1000);
    return until;
  }

  function status() {
    const node = document.getElementById("call-status");
    const talking = document.querySelector(".dx-tile.speaking:not(.me)");
    if (state.open) {
      node.textContent = firstName(person(state.open.speaker)) + " is waiting for your answer";
      node.className = "dx-call-status listening";
    } else if (talking) {
      node.textContent = firstName(person(talking.dataset.person)) + " is speaking\u2026";
      node.className = "dx-call-status";
    } else {
      node.textContent = "";
      node.className = "dx-call-status";
    }
  }

  function startTurns(ctx) {
    const clips = ctx.audioClips;
    state.turns = (ctx.config.turns || []).map((t, index) => {
      const clip = clips[t.clip];
      const end = clip.t + clip.duration;
      const speech = t.expect === "speech";
      return Object.assign({}, t, {
        index, speech, speaker: clip.speaker, done: false, begun: false,
        opens: speech ? end : clip.t, closes: end + (t.window_s || 15),
      });
    });
    for (const turn of state.turns) {
      if (!turn.speech) continue;
      ctx.at(turn.opens, () => { if (!turn.done) { state.open = turn; status(); } });
    }
    ctx.every(0.25, () => {
      const now = ctx.now();
      for (const turn of state.turns) {
        if (turn.done || now < turn.closes) continue;
        if (turn.begun && now < turn.closes + 15) continue;  // an answer begun in time may finish
        state.open = null;
        status();
        ctx.timeout();
        return;
      }
    });
  }

  async function listen(ctx) {
    document.getElementById("my-mic").replaceChildren(icon("mic"));
    const badge = document.querySelector("#my-tile .dx-tile-mic");
    badge.classList.remove("off");
    badge.replaceChildren(icon("mic"));
    const mic = await ctx.listen(async (text) => {
      const turn = state.open;
      if (!turn) return;  // talking while nobody waits for an answer is not an answer
      state.open = null;
      status();
      const verdict = await ctx.gradeSpoken(turn.field, text);
      if (verdict !== "accepted") { ctx.fail(turn.failure || "wrong_answer"); return; }
      answered(turn.field);
    });
    const me = document.getElementById("my-tile");
    ctx.every(0.05, () => {
      const loud = mic.level() > 0.01;
      me.classList.toggle("speaking", loud);
      if (loud && state.open) state.open.begun = true;
    });
  }

  DynaCU.task({
    autoplayAudio: false,
    setup(ctx) {
      state.ctx = ctx;
      build(ctx);
      buildComments(ctx.config);
    },
    async start(ctx) {
      const call = ctx.config.call || {};
      const clock = document.getElementById("call-clock");
      ctx.every(0.5, () => { clock.textContent = fmt((call.elapsed_s || 0) + ctx.now()); });
      for (const line of ctx.timeline) ctx.at(line.t, () => play(line));
      const acks = new Set((ctx.config.turns || []).map((t) => t.ack_clip).filter((i) => i !== undefined));
      ctx.audioClips.forEach((clip, i) => { if (!acks.has(i)) playClip(i, clip.t); });
      startTurns(ctx);
      ctx.every(1, layoutCards);
      if (state.turns.some((t) => t.speech)) await listen(ctx);
    },
  });
})();
