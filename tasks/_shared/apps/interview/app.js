/* Interview room (category H): a video-call interview. The interviewer asks questions aloud (the
 * script's clips) and listens to the candidate's microphone; what is said is never written on
 * the page and there is no text box. Layout: the interviewer's tile (and any panel members),
 * the candidate's self-view with a live mic level meter, a shared screen the interviewers can
 * present in, the interview's progress, and the call timer.
 *
 * config:
 *   company, role                      shown in the top bar
 *   interviewer = {name, title, speaker, color, camera, look}
 *                                      the lead interviewer's tile; speaker is the script's
 *                                      speaker key (default: the first speaker); camera = true
 *                                      draws a webcam picture instead of initials (look: which
 *                                      person and room, 0-4; default the tile's index)
 *   panel = [{speaker, name, title, color, camera, look}]
 *                                      more interviewers on the call (optional); a tile lights
 *                                      up while its speaker's clip plays
 *   [[config.questions]]               asked in order, one answer window each
 *     field = "capital"                the answer field this question checks
 *     clip = 1                         index of the spoken line that asks it
 *     window_s = 20                    seconds to start answering once the question ends
 *     ack_clip = 2                     optional: a clip played after a right answer
 *     label = "Warm-up"                optional: its name in the progress list
 *     branches = [{match, clip, field, window_s, ack_clip}]
 *                                      optional, instead of field: a follow-up that depends on
 *                                      the answer. The answer must name exactly one branch's
 *                                      `match` (a word or phrase that is on screen, e.g. a
 *                                      project of the candidate's resume); the question's own
 *                                      ack_clip plays, then that branch's clip asks the
 *                                      follow-up, checked against the branch's field.
 *
 * Clip timing. The first question's clip and every clip no question refers to play at their
 * script times (an introduction, a demo's narration). Every other question clip, every ack_clip
 * and every branch clip is a reply: it plays once the answer before it was heard (after that
 * answer's ack), so answers are given in turn and those lines' script times are nominal.
 *
 * Answer windows. A question's window opens when its clip ends; the status says the
 * interviewer is waiting (no countdown). The first utterance heard in the window is the answer:
 * it must mention an accepted answer and no near miss, else the episode ends as "wrong_answer".
 * Nothing said by the end of the window is "timeout" (an answer begun in time may finish and be
 * transcribed after it). Talking while no window is open is ignored. After the last answer (and
 * its ack) the episode succeeds.
 *
 * Shared screen: timeline lines with `present` put a window on the shared screen from t until
 * `until` (or the next `present` line); its content exists in the DOM only while it is shown.
 * Common keys: title, subtitle, window_title (the shared window's title bar), by (speaker key of
 * the presenter; default the lead interviewer). Per kind:
 *   present = "chart"  bars = [{label, value}], unit (axis caption), values (show the numbers on
 *                      the bars, default true)
 *   present = "table"  columns = [...], rows = [[...], ...], note
 *   present = "doc"    a document page (a resume): title, subtitle, contact,
 *                      sections = [{heading, items = [{title, meta, text}]}]
 *   present = "app"    a product screen: brand, nav = [...], active, heading, cards =
 *                      [{title, value, sub, tone}], list_title, items = [{text, meta, tag, tone,
 *                      at}]; an item with `at` appears that many seconds after the line's t (a
 *                      demo's steps); tone = "good" | "bad" | "info"; button (a primary
 *                      button's label). A demo is several such lines, one per screen.
 * Timeline lines with `toast` show a notification over the shared screen from t until `until`
 * (toast_title optional): a detail on screen for a few seconds only.
 */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const {el, initials, barChart} = DynaCU.ui;
  const clock = (s) => DynaCU.ui.clock(s, {pad: true});

  const COLORS = ["#5b6b8c", "#8c5b7a", "#4f7d6a", "#8a6d3b", "#5d5f9e"];
  const SKINS = ["#f1c7a5", "#a8704a", "#d9a07a", "#7a4a2a", "#e8b896"];
  const HAIRS = ["#2b1d14", "#111111", "#8d5a2b", "#5a3825", "#c9a36a"];
  const SHIRTS = ["#3b5b8c", "#6b4a7a", "#2f6b5a", "#8c4a3b", "#44546a"];
  const WALLS = ["#cfd6e0", "#d9cfc3", "#c9d3c6", "#d6d0dc", "#d4dadd"];

  /** A webcam picture: a person in front of a wall, drawn from the participant's index. */
  function webcam(k) {
    const ns = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 160 90");
    svg.setAttribute("preserveAspectRatio", "xMidYMid meet");  // a 16:9 camera, letterboxed
    svg.setAttribute("class", "cam-feed");
    const shape = (tag, attrs) => {
      const s = document.createElementNS(ns, tag);
      for (const [a, v] of Object.entries(attrs)) s.setAttribute(a, v);
      svg.appendChild(s);
    };
    shape("rect", {width: 160, height: 90, fill: WALLS[k % WALLS.length]});
    shape("rect", {x: 112, y: 10, width: 34, height: 26, rx: 1.5, fill: "#fff", "fill-opacity": ".25"});
    shape("rect", {x: 16, y: 30, width: 9, height: 13, rx: 1, fill: "#000", "fill-opacity": ".16"});
    shape("circle", {cx: 20.5, cy: 26, r: 7, fill: "#3f7a4a", "fill-opacity": ".7"});
    shape("path", {d: "M44 90c2-19 16-28 36-28s34 9 36 28z", fill: SHIRTS[k % SHIRTS.length]});
    shape("rect", {x: 73, y: 47, width: 14, height: 16, rx: 5, fill: SKINS[k % SKINS.length], style: "filter: brightness(.9)"});
    shape("ellipse", {cx: 80, cy: 37, rx: 14.5, ry: 17.5, fill: SKINS[k % SKINS.length]});
    shape("path", {d: "M65 38c-3-17 8-24 15-24s19 5 15 24c-1-8-5-13-15-13s-14 5-15 13z", fill: HAIRS[k % HAIRS.length]});
    return svg;
  }

  // ---- shared-screen renderers: each builds the presented window's content from a line ------
  function renderChart(line) {
    const plot = barChart(line.bars || [], {grid: 0, values: line.values});
    return el("div", {class: "sheet chart"},
      el("h3", {text: line.title || ""}),
      line.subtitle ? el("p", {class: "sheet-sub", text: line.subtitle}) : null,
      line.unit ? el("div", {class: "axis-unit", text: line.unit}) : null,
      plot);
  }

  function renderTable(line) {
    const table = el("table", {class: "data"});
    const head = el("tr");
    (line.columns || []).forEach((c) => head.append(el("th", {text: c})));
    table.append(el("thead", null, head));
    const body = el("tbody");
    (line.rows || []).forEach((row) => {
      const tr = el("tr");
      row.forEach((cell) => tr.append(el("td", {text: cell})));
      body.append(tr);
    });
    table.append(body);
    return el("div", {class: "sheet table"},
      el("h3", {text: line.title || ""}),
      line.subtitle ? el("p", {class: "sheet-sub", text: line.subtitle}) : null,
      table,
      line.note ? el("p", {class: "sheet-note", text: line.note}) : null);
  }

  function renderDoc(line) {
    const page = el("div", {class: "page"},
      el("h3", {class: "doc-name", text: line.title || ""}),
      line.subtitle ? el("div", {class: "doc-headline", text: line.subtitle}) : null,
      line.contact ? el("div", {class: "doc-contact", text: line.contact}) : null);
    (line.sections || []).forEach((s) => {
      page.append(el("h4", {text: s.heading || ""}));
      (s.items || []).forEach((it) => {
        page.append(el("div", {class: "doc-item"},
          el("div", {class: "doc-item-head"}, el("strong", {text: it.title || ""}), it.meta ? el("span", {text: it.meta}) : null),
          it.text ? el("p", {text: it.text}) : null));
      });
    });
    return el("div", {class: "sheet doc"}, page);
  }

  /** `since`: when this line was last drawn (-1: newly shown); items already there then do not
   * animate again. */
  function renderApp(line, elapsed, since) {
    const nav = el("nav", {class: "app-nav"}, el("div", {class: "app-brand", text: line.brand || ""}));
    (line.nav || []).forEach((n) => nav.append(el("div", {class: "app-nav-item" + (n === line.active ? " active" : ""), text: n})));
    const main = el("div", {class: "app-main"},
      el("div", {class: "app-head"},
        el("div", null, el("h3", {text: line.heading || line.title || ""}), line.subtitle ? el("p", {class: "sheet-sub", text: line.subtitle}) : null),
        line.button ? el("span", {class: "app-button", text: line.button}) : null));
    if (line.cards) {
      const cards = el("div", {class: "app-cards"});
      line.cards.forEach((c) => cards.append(el("div", {class: "app-card" + (c.tone ? " tone-" + c.tone : "")},
        el("div", {class: "card-title", text: c.title || ""}),
        el("div", {class: "card-value", text: c.value === undefined ? "" : c.value}),
        c.sub ? el("div", {class: "card-sub", text: c.sub}) : null)));
      main.append(cards);
    }
    const items = (line.items || []).filter((it) => it.at === undefined || elapsed >= it.at);
    if (line.items) {
      const list = el("div", {class: "app-list"});
      if (line.list_title) list.append(el("div", {class: "list-title", text: line.list_title}));
      items.forEach((it) => list.append(el("div", {class: "app-item" + (it.tone ? " tone-" + it.tone : "") + ((it.at === undefined ? 0 : it.at) <= since ? " settled" : "")},
        el("span", {class: "item-text", text: it.text || ""}),
        it.meta ? el("span", {class: "item-meta", text: it.meta}) : null,
        it.tag ? el("span", {class: "item-tag", text: it.tag}) : null)));
      main.append(list);
    }
    return el("div", {class: "sheet app"}, nav, main);
  }

  const RENDER = {chart: renderChart, table: renderTable, doc: renderDoc, app: renderApp};

  let lead = null;        // the lead interviewer (config.interviewer with its speaker key)
  const byName = {};      // speaker key -> interviewer

  DynaCU.task({
    autoplayAudio: false,
    setup(ctx) {
      const cfg = ctx.config;
      $("company").textContent = cfg.company || "Company";
      $("role").textContent = "Interview · " + (cfg.role || "Candidate screening");
      const speakers = Array.from(new Set(ctx.audioClips.map((c) => c.speaker)));
      lead = Object.assign({name: "Interviewer", title: ""}, cfg.interviewer || {});
      if (!lead.speaker) lead.speaker = speakers[0];
      const people = [lead].concat(cfg.panel || []);
      people.forEach((p, k) => {
        const tile = el("div", {class: "tile person", attrs: {"data-speaker": p.speaker || ""}},
          p.camera ? webcam(p.look === undefined ? k : p.look) : el("div", {class: "avatar", text: initials(p.name), style: {background: p.color || COLORS[k % COLORS.length]}}),
          el("div", {class: "nameplate"}, el("span", {text: p.name}), el("span", {class: "sub", text: p.title || ""})),
          el("div", {class: "speaking-bars", attrs: {"aria-hidden": "true"}}, el("i"), el("i"), el("i"), el("i")),
          el("div", {class: "waiting", text: "Listening"}));
        if (k === 0) tile.id = "interviewer-tile";
        $("people").append(tile);
        if (p.speaker) byName[p.speaker] = p;
      });
      $("people").classList.toggle("many", people.length > 1);

      const questions = cfg.questions || [];
      const progress = $("progress");
      progress.append(el("li", {text: "Introductions"}));
      questions.forEach((q, i) => {
        progress.append(el("li", {text: q.label || "Question " + (i + 1)}));
        if (q.branches) progress.append(el("li", {text: "Follow-up"}));
      });
      progress.append(el("li", {text: "Wrap-up"}));
      $("status").textContent = "Connected";
    },
    async start(ctx) {
      const cfg = ctx.config;
      const clips = ctx.audioClips;
      const questions = cfg.questions || [];
      const items = Array.from($("progress").children);
      const firstName = (p) => String((p && p.name) || "Interviewer").split(/\s+/)[0];

      // ---- who is speaking ----------------------------------------------------------------
      const replies = new Set();
      questions.forEach((q, k) => {
        if (k > 0) replies.add(q.clip);
        if (q.ack_clip !== undefined) replies.add(q.ack_clip);
        (q.branches || []).forEach((b) => {
          replies.add(b.clip);
          if (b.ack_clip !== undefined) replies.add(b.ack_clip);
        });
      });
      let lastSpeaker = lead.speaker;
      let open = null;        // the answer window open now (a question or a follow-up), or null
      function tileOf(speaker) {
        return document.querySelector('.person[data-speaker="' + CSS.escape(speaker || "") + '"]') || $("interviewer-tile");
      }
      /** Play clip i after `delay` s; returns when (episode seconds) it ends. */
      function play(i, delay) {
        ctx.playClip(i, delay);
        const from = ctx.now() + delay;
        const until = from + clips[i].duration;
        const tile = tileOf(clips[i].speaker);
        ctx.at(from, () => { tile.classList.add("speaking"); lastSpeaker = clips[i].speaker; if (!open) setStatus(firstName(byName[clips[i].speaker] || lead) + " is speaking…"); });
        ctx.at(until, () => tile.classList.remove("speaking"));
        return until;
      }
      clips.forEach((clip, i) => { if (!replies.has(i)) play(i, clip.t); });

      // ---- call timer, shared screen and toasts (own timers: content must leave the DOM on
      // time even once the episode is decided) ----------------------------------------------
      const presents = ctx.timeline.filter((l) => l.present);
      const toasts = ctx.timeline.filter((l) => l.toast);
      let shown = null, shownStep = -1, shownAt = -1;
      const shownToasts = new Map();
      function activeLine(t) {
        let cur = null;  // the latest line started; a later line replaces it
        for (const l of presents) if (l.t <= t && (!cur || l.t >= cur.t)) cur = l;
        return cur && (cur.until === null || cur.until === undefined || t < cur.until) ? cur : null;
      }
      function tick() {
        const t = ctx.now();
        $("clock").textContent = clock(t);
        const line = activeLine(t);
        const step = line ? (line.items || []).filter((it) => it.at !== undefined && t - line.t >= it.at).length : -1;
        if (line !== shown || step !== shownStep) {
          const since = line === shown ? shownAt - line.t : -1;
          shown = line; shownStep = step; shownAt = t;
          const body = $("screen-body");
          body.replaceChildren();
          if (line) {
            const render = RENDER[line.present];
            if (!render) throw new Error("unknown present kind " + line.present);
            const who = byName[line.by] || lead;
            $("presenter-label").textContent = who.name + " is presenting";
            body.append(el("div", {class: "window"},
              el("div", {class: "window-bar"}, el("i"), el("i"), el("i"), el("span", {text: line.window_title || line.title || ""})),
              render(line, t - line.t, since)));
          }
          $("screen").hidden = !line;
          $("stage").classList.toggle("presenting", !!line);
        }
        toasts.forEach((l) => {
          const on = l.t <= t && (l.until === null || l.until === undefined || t < l.until);
          if (on && !shownToasts.has(l)) {
            const node = el("div", {class: "toast"}, el("div", {class: "toast-title", text: l.toast_title || "Notification"}), el("div", {text: l.toast}));
            $("toasts").append(node);
            shownToasts.set(l, node);
          } else if (!on && shownToasts.has(l)) {
            shownToasts.get(l).remove();
            shownToasts.delete(l);
          }
        });
      }
      tick();
      setInterval(tick, 100);

      // ---- questions and answers ----------------------------------------------------------
      // A "turn" is one answer window: a question, or the follow-up a branch opens.
      let windowEnds = 0;     // episode seconds
      let begun = false;      // the candidate started speaking inside the window
      function setStatus(text, listening) {
        $("status").textContent = text;
        $("status").classList.toggle("listening", !!listening);
      }
      function mark(k) {
        items.forEach((li, i) => {
          li.classList.toggle("done", i < k);
          li.classList.toggle("current", i === k);
        });
      }
      function openWindow(turn, at) {
        ctx.at(at, () => {
          open = turn;
          begun = false;
          windowEnds = ctx.now() + (turn.window_s || 20);
          const who = byName[clips[turn.clip].speaker] || lead;
          setStatus(firstName(who) + " is waiting for your answer", true);
          tileOf(clips[turn.clip].speaker).classList.add("listening");
        });
      }
      function closeWindow() {
        document.querySelectorAll(".person.listening").forEach((t) => t.classList.remove("listening"));
        open = null;
      }
      function ask(k, at) {
        const q = questions[k];
        // The first question plays at its script time; later ones follow the previous answer.
        const end = k === 0 ? clips[q.clip].t + clips[q.clip].duration : play(q.clip, Math.max(0, at - ctx.now()));
        ctx.at(k === 0 ? clips[q.clip].t : at, () => mark(stepOf(k)));
        openWindow(Object.assign({}, q, {index: k}), end);
      }
      function stepOf(k) {
        let s = 1;
        for (let i = 0; i < k; i++) s += questions[i].branches ? 2 : 1;
        return s;
      }
      /** After a right answer: the ack, then the next question (or the end). */
      function advance(turn) {
        let t = ctx.now() + 0.3;
        if (turn.ack_clip !== undefined) t = play(turn.ack_clip, 0.3) + 0.5;
        const next = turn.index + 1;
        if (next < questions.length) ask(next, t);
        else {
          mark(items.length - 1);
          ctx.at(t, () => { setStatus("Interview complete: thank you"); ctx.succeed(); });
        }
      }
      mark(0);
      if (questions.length) ask(0, 0);

      ctx.every(0.25, () => {
        if (!open || ctx.now() < windowEnds) return;
        // An answer begun in time may still be finishing or being transcribed.
        if (begun && ctx.now() < windowEnds + 15) return;
        closeWindow();
        ctx.timeout();
      });

      const mic = await ctx.listen(async (text) => {
        if (!open) return;  // talking over the interviewer is not an answer
        const turn = open;
        closeWindow();
        setStatus(firstName(byName[lastSpeaker] || lead) + " is noting your answer…");
        if (turn.branches) {
          const said = " " + DynaCU.normalize("text", text) + " ";
          const hits = turn.branches.filter((b) => said.includes(" " + DynaCU.normalize("text", b.match) + " "));
          if (hits.length !== 1) { ctx.fail("wrong_answer"); return; }
          const b = hits[0];
          let t = ctx.now() + 0.3;
          if (turn.ack_clip !== undefined) t = play(turn.ack_clip, 0.3) + 0.3;
          mark(stepOf(turn.index) + 1);
          const end = play(b.clip, Math.max(0, t - ctx.now()));
          openWindow(Object.assign({window_s: turn.window_s}, b, {index: turn.index}), end);
          return;
        }
        const verdict = await ctx.gradeSpoken(turn.field, text);
        if (verdict !== "accepted") { ctx.fail("wrong_answer"); return; }
        advance(turn);
      });
      const bars = Array.from($("meter").children);
      ctx.every(0.05, () => {
        const level = mic.level();
        if (open && level > 0.01) begun = true;
        const lit = Math.round(Math.min(1, level / 0.12) * bars.length);
        bars.forEach((b, i) => b.classList.toggle("lit", i < lit));
        $("self-tile").classList.toggle("speaking", level > 0.01);
      });
    },
  });
})();
