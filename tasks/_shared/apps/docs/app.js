/* docs: a collaborative document editor with a call beside it.
 *
 * The document, the people and the call come from ctx.config; what collaborators do (their live
 * caret moving and typing) comes from ctx.timeline; who is speaking comes from ctx.audioClips
 * (a clip's speaker lights up that person's tile). What is said is never written on the page.
 *
 * [config]
 *   product      "Docs"                           the editor's name (window title)
 *   doc_title    "Spring offsite plan"            the file name in the top bar
 *   folder       "Team planning"                  shown beside the file name
 *   me           {name, initials, color}          the agent
 *   people       [{id, name, initials, color, role}]   collaborators; id = the script speaker
 *   call         {title, elapsed_s}               the call's name; its clock starts at elapsed_s
 *   heading      "Spring Offsite Plan"            the document's title line
 *   byline       "Owner: ... · Last edited ..."   the grey line under it
 *   sections     [{id, heading, text | paragraphs | items | checklist, input...}]
 *                  text/paragraphs: prose; items: a bulleted list; checklist: [{text, done,
 *                  who}] (who: a person id or "me", shown as an @chip).
 *                  input = "FIELD": an editable line at the end of the section, checked with
 *                  ctx.checkAnswer(FIELD) when the agent presses Enter in it or its button;
 *                  placeholder, button ("Done"). With several inputs, each Done locks its line
 *                  and the last one decides (success only if all match).
 *
 * [[script]] lines the page reads (ctx.timeline), all by `who` (a person id):
 *   cursor = "SECTION" or "SECTION.N"   move the caret to the end of block N of the section
 *                                       (its last block when N is absent; "SECTION.input" is
 *                                       the section's editable line, which gets marked)
 *   type = "text"                       then type this text there, `cps` characters a second
 *                                       (default 9)
 *   mark = true                         with cursor = "X.input": keep the line marked in the
 *                                       person's colour (until `until`, if given)
 */
(function () {
  "use strict";

  const ICON = {
    doc: '<svg viewBox="0 0 28 36" aria-hidden="true"><path d="M0 3a3 3 0 0 1 3-3h15l10 10v23a3 3 0 0 1-3 3H3a3 3 0 0 1-3-3z" fill="#4285f4"/><path d="M18 0v7a3 3 0 0 0 3 3h7z" fill="#a1c2fa"/><rect x="6" y="16" width="16" height="2.2" rx="1" fill="#fff"/><rect x="6" y="21" width="16" height="2.2" rx="1" fill="#fff"/><rect x="6" y="26" width="11" height="2.2" rx="1" fill="#fff"/></svg>',
    star: '<svg viewBox="0 0 24 24"><path d="m12 3 2.7 5.6 6.1.9-4.4 4.3 1 6.1L12 17l-5.4 2.9 1-6.1-4.4-4.3 6.1-.9z" fill="none" stroke="currentColor" stroke-width="1.6" stroke-linejoin="round"/></svg>',
    cloud: '<svg viewBox="0 0 24 24"><path d="M7 18h10a4 4 0 0 0 .6-8A6 6 0 0 0 6.3 9.2 4.5 4.5 0 0 0 7 18z" fill="none" stroke="currentColor" stroke-width="1.6"/><path d="m9.5 13.5 2 2 3.5-3.5" fill="none" stroke="currentColor" stroke-width="1.6"/></svg>',
    undo: '<svg viewBox="0 0 24 24"><path d="M9 7 4 12l5 5M4 12h10a6 6 0 0 1 0 12" fill="none" stroke="currentColor" stroke-width="1.8" transform="translate(0 -3)"/></svg>',
    redo: '<svg viewBox="0 0 24 24"><path d="m15 7 5 5-5 5M20 12H10a6 6 0 0 0 0 12" fill="none" stroke="currentColor" stroke-width="1.8" transform="translate(0 -3)"/></svg>',
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

  function el(spec, props, children) {
    const [tag, ...classes] = spec.split(".");
    const node = document.createElement(tag || "div");
    if (classes.length) node.className = classes.join(" ");
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "html") node.innerHTML = value;
      else if (key === "style") node.style.cssText = value;
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children || []) if (child) node.append(child);
    return node;
  }
  const icon = (name, cls) => el("span.ic" + (cls ? "." + cls : ""), {html: ICON[name]});

  const state = {ctx: null, people: {}, blocks: {}, inputs: [], carets: {}};

  function person(id) {
    if (id === "me") return state.me;
    return state.people[id] || {id, name: id, initials: id.slice(0, 2).toUpperCase(), color: "#9334e6"};
  }

  // ---- page ---------------------------------------------------------------------------------

  function build(ctx) {
    const cfg = ctx.config;
    state.me = Object.assign({id: "me", name: "You", initials: "ME", color: "#1a73e8"}, cfg.me || {});
    for (const p of cfg.people || []) state.people[p.id] = Object.assign({initials: p.name.split(" ").map((w) => w[0]).join("").slice(0, 2)}, p);
    document.title = (cfg.doc_title || "Untitled document") + " - " + (cfg.product || "Docs");
    const app = document.getElementById("app");
    app.append(buildTopBar(cfg), buildToolbar(), el("div.dx-body", {}, [buildCanvas(cfg), buildCall(cfg)]));
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
    return el("div.dx-toolbar", {}, [
      btn("undo"), btn("redo"), btn("print"), btn("pen"), sep(),
      drop("100%", 62), sep(), drop("Normal text", 110), sep(), drop("Arial", 84), sep(),
      el("span.dx-size", {}, [el("span", {text: "\u2212"}), el("b", {text: "11"}), el("span", {text: "+"})]), sep(),
      glyph("B", "b"), glyph("I", "i"), glyph("U", "u"), glyph("A", "color"), sep(),
      btn("link"), btn("comment"), btn("image"), sep(),
      btn("align"), btn("checklist"), btn("bullets"), btn("indent"),
      el("span.dx-mode", {}, [icon("pen"), el("span", {text: "Editing"})]),
    ]);
  }

  function buildCanvas(cfg) {
    const page = el("article.dx-page", {id: "page"}, [
      el("h1.dx-h1", {text: cfg.heading || cfg.doc_title || ""}),
      cfg.byline && el("p.dx-byline", {text: cfg.byline}),
    ]);
    for (const s of cfg.sections || []) page.append(buildSection(s));
    return el("div.dx-canvas", {}, [el("div.dx-ruler"), page]);
  }

  function buildSection(s) {
    const blocks = [];
    const box = el("section.dx-sec", {"data-section": s.id}, [s.heading && el("h2", {text: s.heading})]);
    const paragraphs = s.paragraphs || (s.text ? [s.text] : []);
    for (const text of paragraphs) {
      const p = el("p", {text});
      blocks.push(p);
      box.append(p);
    }
    if (s.items) {
      const ul = el("ul", {}, s.items.map((text) => { const li = el("li", {text}); blocks.push(li); return li; }));
      box.append(ul);
    }
    if (s.checklist || s.input) {
      const ul = el("ul.dx-check", {}, []);
      for (const item of s.checklist || []) {
        const text = el("span.t", {text: item.text});
        blocks.push(text);
        ul.append(el("li" + (item.done ? ".done" : ""), {}, [
          el("span.box", {}, [item.done ? icon("check") : null]),
          text,
          item.who && chip(person(item.who)),
        ]));
      }
      if (s.input) ul.append(buildInput(s));
      box.append(ul);
    }
    blocks.forEach((b, i) => { state.blocks[s.id + "." + i] = b; });
    if (blocks.length) state.blocks[s.id] = blocks[blocks.length - 1];
    return box;
  }

  function chip(p) {
    const c = el("span.dx-chip", {text: "@" + p.name.split(" ")[0]});
    c.style.setProperty("--who", p.color);
    return c;
  }

  function buildInput(s) {
    const edit = el("div.dx-edit", {
      contenteditable: "plaintext-only", role: "textbox", "aria-label": s.heading || "new item",
      "data-placeholder": s.placeholder || "Type here", spellcheck: "false",
    });
    const button = el("button.dx-done", {type: "button"}, [icon("check"), el("span", {text: s.button || "Done"})]);
    const row = el("li.dx-input", {"data-section": s.id}, [el("span.box"), edit, button]);
    const entry = {field: s.input, edit, button, row, locked: false};
    state.inputs.push(entry);
    state.blocks[s.id + ".input"] = row;
    edit.addEventListener("input", () => { if (!edit.textContent) edit.innerHTML = ""; });
    edit.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); commit(entry); }
    });
    button.addEventListener("click", () => commit(entry));
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
      el("div.dx-call-bar", {}, [
        el("span.cb", {}, [icon("micOff")]),
        el("span.cb", {}, [icon("cam")]),
        el("span.cb", {}, [icon("present")]),
        el("span.cb.leave", {}, [icon("hangup")]),
      ]),
    ]);
  }

  function tile(p, isMe) {
    const a = el("span.dx-tile-av", {text: p.initials});
    a.style.background = p.color;
    const t = el("div.dx-tile" + (isMe ? ".me" : ""), {"data-person": p.id}, [
      el("div.ring", {}, [a]),
      el("div.dx-tile-name", {}, [
        el("span.lvl", {}, [el("i"), el("i"), el("i")]),
        el("span", {text: isMe ? p.name + " (you)" : p.name}),
      ]),
      isMe ? el("span.dx-tile-mic.off", {}, [icon("micOff")]) : null,
    ]);
    t.style.setProperty("--who", p.color);
    return t;
  }

  function fmt(s) {
    s = Math.max(0, Math.floor(s));
    return String(Math.floor(s / 60)).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
  }

  // ---- collaborators ------------------------------------------------------------------------

  function caretOf(who) {
    if (!state.carets[who]) {
      const p = person(who);
      const c = el("span.dx-caret", {}, [el("span.flag", {text: p.name.split(" ")[0]})]);
      c.style.setProperty("--who", p.color);
      state.carets[who] = c;
    }
    return state.carets[who];
  }

  function moveCaret(line) {
    const target = state.blocks[line.cursor];
    if (!target) return null;
    const caret = caretOf(line.who);
    const p = person(line.who);
    for (const row of document.querySelectorAll(".dx-input.marked")) {
      if (row.dataset.markedBy === line.who) { row.classList.remove("marked"); row.style.removeProperty("--who"); }
    }
    if (target.classList.contains("dx-input")) {
      target.querySelector(".box").after(caret);
      if (line.mark) {
        target.classList.add("marked");
        target.dataset.markedBy = line.who;
        target.style.setProperty("--who", p.color);
        if (line.until != null) state.ctx.at(line.until, () => target.classList.remove("marked"));
      }
    } else {
      target.append(caret);
    }
    caret.classList.remove("blink");
    void caret.offsetWidth;
    caret.classList.add("blink");
    return target;
  }

  function typeInto(line, target) {
    const caret = caretOf(line.who);
    const node = document.createTextNode("");
    caret.before(node);
    const text = String(line.type);
    const cps = line.cps || 9;
    let i = 0;
    const tick = () => {
      if (i >= text.length || state.ctx.result !== "pending") return;
      node.data += text[i++];
      caret.classList.add("typing");
      // Human rhythm: a little slower after spaces and punctuation.
      const pause = /[\s,.;]/.test(text[i - 1]) ? 1.6 : 1;
      setTimeout(tick, (1000 / cps) * pause * (0.7 + 0.6 * state.ctx.rng()));
      if (i >= text.length) setTimeout(() => caret.classList.remove("typing"), 400);
    };
    tick();
    return target;
  }

  function play(line) {
    if (!line.who || !line.cursor) return;
    const target = moveCaret(line);
    if (target && line.type) typeInto(line, target);
  }

  function speaking(clip, on) {
    for (const node of document.querySelectorAll('[data-person="' + clip.speaker + '"]')) {
      node.classList.toggle("speaking", on);
    }
  }

  // ---- the agent's input --------------------------------------------------------------------

  async function commit(entry) {
    const text = entry.edit.textContent.trim();
    if (!text || entry.locked) return;
    entry.locked = true;
    entry.edit.setAttribute("contenteditable", "false");
    entry.row.classList.add("locked");
    entry.row.classList.remove("marked");
    entry.button.disabled = true;
    const ctx = state.ctx;
    if (state.inputs.length === 1) {
      await ctx.checkAnswer(entry.field, text);
      return;
    }
    if (state.inputs.every((i) => i.locked)) {
      const results = await Promise.all(state.inputs.map((i) => ctx.matches(i.field, i.edit.textContent.trim())));
      if (results.every(Boolean)) ctx.succeed();
      else ctx.fail("wrong_answer");
    }
  }

  DynaCU.task({
    setup(ctx) {
      state.ctx = ctx;
      build(ctx);
    },
    start(ctx) {
      const call = ctx.config.call || {};
      const clock = document.getElementById("call-clock");
      ctx.every(0.5, () => { clock.textContent = fmt((call.elapsed_s || 0) + ctx.now()); });
      for (const line of ctx.timeline) ctx.at(line.t, () => play(line));
      for (const clip of ctx.audioClips) {
        ctx.at(clip.t, () => speaking(clip, true));
        ctx.at(clip.t + clip.duration, () => speaking(clip, false));
      }
    },
  });
})();
