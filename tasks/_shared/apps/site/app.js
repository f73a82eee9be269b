/* site: a static website for the control tasks. Nothing on it moves, plays or changes by
 * itself: what changes, the agent's own clicks and typing change.
 *
 * Everything on the page comes from the task's [config]; the page holds no answer and grades
 * what the agent gives with ctx.grade / ctx.checkAnswer.
 *
 * [config]
 *   site         {name, tagline, color}         the site's name, its strapline and colour
 *   nav          [label | {label, to}]          top navigation; `to` opens that page
 *   pages        [{...}]                        the site's pages; the first is shown first:
 *                  id, title, crumbs = [...] (the trail above the title), intro, blocks =
 *                  [...], final = true (opening it is the agent's answer: see goal)
 *   goal         {field, failure, confirm,      opening a `final` page grades its title as
 *                 prompt}                      `field` and decides the episode (right: success;
 *                  else failure, default wrong_answer); pages that are not final are on the
 *                  way. With confirm, a final page opens the bar above the footer (prompt,
 *                  default "Did you find what you were looking for?") and its button (that
 *                  label) decides.
 *   aside        [{...}]                        blocks in the right-hand column, on every page
 *   footer       "..."
 *
 * Blocks (in pages and in aside), by `kind`:
 *   heading      text, level (2 or 3)
 *   text         text (blank lines part paragraphs)
 *   list         items = [...], ordered
 *   card         title, lines = [...]           a boxed panel
 *   notice       text, tone = info|warning|success
 *   table        caption, columns = [...], rows = [[...], ...], numeric = [column indexes,
 *                  right-aligned], pick = {field, label, column, confirm, failure}: each row
 *                  gets a button (label, default "Choose") that selects it; the bar that
 *                  opens above the footer has a button (confirm, default "Continue") that
 *                  grades the selected row's `column` cell (default 0) as `field` and decides
 *                  the episode
 *   links        title, items = [{label, to, text}]   a list of links; `to` opens a page (the
 *                  link has data-to = its id and data-title = its title)
 *   form         title, fields = [...], submit = {label, confirm, failure}, done_text
 *                  a field: name, label, type = text|email|tel|number|date|select|radio|
 *                  checkbox|textarea, options (select, radio), value, placeholder, hint,
 *                  required, answer = "FIELD". Submit checks the required fields are filled,
 *                  then grades each field with `answer` (a checkbox's value is "checked" or
 *                  "unchecked"; a radio's, the option picked): all right -> success, else
 *                  submit.failure (default wrong_answer). One submit is the answer; with
 *                  submit.confirm, a submit opens the bar above the footer with what was given,
 *                  and its button (that label) is the answer (a change to the form closes it).
 *                  type = checks: a group of boxes, one per option (each input has data-label
 *                  = its option; value = the options ticked at the start), with answers =
 *                  ["FIELD", ...]: each field's answer is the label of a box that must be
 *                  ticked, whatever else is ticked; any other box ticked is wrong. only =
 *                  "NAME": the checklist criterion a wrong box costs (one of the answers, then
 *                  held when its box is ticked and no wrong one is, or a criterion of its own).
 *                  A task with a checklist must name it, or a wrong box would fail the form
 *                  with every criterion held.
 *   answer       title, label, field, placeholder, button, failure
 *                  a box: Enter or the button checks the text as `field` and decides
 */
(function () {
  "use strict";
  const {el} = DynaCU.ui;

  const state = {ctx: null, page: null, decided: false};

  function pageById(id) {
    const page = (state.ctx.config.pages || []).find((p) => p.id === id);
    if (!page) throw new Error("site: no page with id " + id);
    return page;
  }

  /** The agent's one answer: grade, then decide (later answers change nothing). */
  async function decide(field, text, failure) {
    if (state.decided || state.ctx.result !== "pending") return false;
    state.decided = true;
    return state.ctx.checkAnswer(field, text, failure || "wrong_answer");
  }

  // The bar above the footer where a choice waits for its confirmation (a table's pick, a form
  // with submit.confirm, a final page with goal.confirm): one stray click decides nothing.
  function confirmBar(label, onConfirm) {
    const bar = el("div.st-confirm-bar");
    const said = el("span.st-confirm-text", {text: ""});
    const button = el("button.st-button.st-confirm", {text: label});
    bar.append(said, button);
    button.addEventListener("click", async () => {
      if (!state.decided && await onConfirm() !== false) button.disabled = true;
    });
    return {
      show(text) {
        said.textContent = text;
        if (bar.isConnected) return;
        const root = document.getElementById("app");
        const footer = root.querySelector(".st-footer");
        if (footer) footer.before(bar); else root.append(bar);
      },
      hide() { bar.remove(); },
    };
  }

  // A table's pick: each row's button (pick.label, default "Choose") selects the row; the bar's
  // button (pick.confirm, default "Continue") gives it as the answer.
  function pickRows(pick, tbody) {
    const label = pick.label || "Choose";
    let chosen = null;
    const bar = confirmBar(pick.confirm || "Continue", async () => {
      if (!chosen || await decide(pick.field, chosen.dataset.value, pick.failure) === false) return false;
      tbody.querySelectorAll("button").forEach((x) => { x.disabled = true; });
      chosen.textContent = "Chosen";
      return true;
    });
    const choose = (tr, button) => {
      if (state.decided) return;
      tbody.querySelectorAll("tr.chosen").forEach((x) => x.classList.remove("chosen"));
      tbody.querySelectorAll("td.pick button").forEach((x) => { x.textContent = label; });
      tr.classList.add("chosen");
      button.textContent = "Selected";
      chosen = button;
      bar.show("Your choice: " + button.dataset.value);
    };
    return {
      /** The button of row `tr`, whose graded value is `value`. */
      button(tr, value) {
        const button = el("button.st-button.small", {text: label});
        button.dataset.value = value;
        button.addEventListener("click", () => choose(tr, button));
        return button;
      },
    };
  }

  // ---- chrome: header, columns, footer ---------------------------------------------------------

  function header(cfg) {
    const site = cfg.site || {};
    const bar = el("header.st-header");
    const brand = el("div.st-brand");
    brand.append(el("span.st-logo", {text: (site.name || "S").trim().charAt(0)}), el("span.st-name", {text: site.name || ""}));
    if (site.tagline) brand.append(el("span.st-tagline", {text: site.tagline}));
    const nav = el("nav.st-nav");
    for (const item of cfg.nav || []) {
      const spec = typeof item === "string" ? {label: item} : item;
      const link = el("a.st-navlink", {text: spec.label});
      link.href = "#";
      if (spec.to) { link.dataset.to = spec.to; link.dataset.title = pageById(spec.to).title; }
      link.addEventListener("click", (e) => { e.preventDefault(); if (spec.to) open(spec.to); });
      nav.append(link);
    }
    bar.append(brand, nav);
    return bar;
  }

  // ---- blocks --------------------------------------------------------------------------------

  const BLOCKS = {
    heading(b) { return el(b.level === 3 ? "h3" : "h2", {class: "st-h", text: b.text}); },
    text(b) {
      const box = el("div.st-text");
      for (const para of String(b.text || "").split(/\n\s*\n/)) box.append(el("p", {text: para.trim()}));
      return box;
    },
    list(b) {
      const list = el(b.ordered ? "ol" : "ul", {class: "st-list"});
      for (const item of b.items || []) list.append(el("li", {text: item}));
      return list;
    },
    card(b) {
      const card = el("section.st-card");
      if (b.title) card.append(el("h3.st-card-title", {text: b.title}));
      for (const line of b.lines || []) card.append(el("p.st-card-line", {text: line}));
      return card;
    },
    notice(b) { return el("div", {class: "st-notice tone-" + (b.tone || "info"), text: b.text}); },
    table(b) {
      const wrap = el("div.st-table-wrap");
      const table = el("table.st-table");
      if (b.caption) table.append(el("caption", {text: b.caption}));
      const numeric = new Set(b.numeric || []);
      const head = el("tr");
      (b.columns || []).forEach((c, i) => head.append(el("th", {class: numeric.has(i) ? "num" : "", text: c})));
      if (b.pick) head.append(el("th", {text: ""}));
      const thead = el("thead");
      thead.append(head);
      const tbody = el("tbody");
      const pick = b.pick ? pickRows(b.pick, tbody) : null;
      for (const row of b.rows || []) {
        const tr = el("tr");
        row.forEach((cell, i) => tr.append(el("td", {class: numeric.has(i) ? "num" : "", text: cell})));
        if (pick) {
          const td = el("td.pick");
          td.append(pick.button(tr, String(row[b.pick.column || 0])));
          tr.append(td);
        }
        tbody.append(tr);
      }
      table.append(thead, tbody);
      wrap.append(table);
      return wrap;
    },
    links(b) {
      const box = el("section.st-links");
      if (b.title) box.append(el("h3.st-card-title", {text: b.title}));
      const list = el("ul");
      for (const item of b.items || []) {
        const li = el("li");
        const link = el("a.st-link", {text: item.label});
        link.href = "#";
        if (item.to) { link.dataset.to = item.to; link.dataset.title = pageById(item.to).title; }
        link.addEventListener("click", (e) => { e.preventDefault(); if (item.to) open(item.to); });
        li.append(link);
        if (item.text) li.append(el("span.st-link-text", {text: item.text}));
        list.append(li);
      }
      box.append(list);
      return box;
    },
    form(b) { return form(b); },
    answer(b) { return answerBox(b); },
  };

  function block(b) {
    const make = BLOCKS[b.kind];
    if (!make) throw new Error("site: unknown block kind " + b.kind);
    return make(b);
  }

  function form(b) {
    const box = el("form.st-form");
    box.noValidate = true;
    if (b.title) box.append(el("h3.st-card-title", {text: b.title}));
    const controls = [];
    for (const f of b.fields || []) {
      const row = el("div", {class: "st-field" + (f.type === "checkbox" ? " check" : "")});
      const id = "f-" + f.name;
      let control, value;
      if (f.type === "select") {
        control = el("select.st-input");
        control.id = id;
        for (const option of ["", ...(f.options || [])]) {
          const o = el("option", {text: option || "Choose\u2026"});
          o.value = option;
          control.append(o);
        }
        control.value = f.value || "";
        value = () => control.value;
      } else if (f.type === "radio") {
        control = el("div.st-radios");
        control.id = id;
        for (const option of f.options || []) {
          const label = el("label.st-radio");
          const input = el("input");
          input.type = "radio";
          input.name = f.name;
          input.value = option;
          input.checked = f.value === option;
          label.append(input, el("span", {text: option}));
          control.append(label);
        }
        value = () => (control.querySelector("input:checked") || {value: ""}).value;
      } else if (f.type === "checks") {
        control = el("div.st-checks");
        control.id = id;
        const ticked = new Set(f.value || []);
        for (const option of f.options || []) {
          const label = el("label.st-check");
          const input = el("input");
          input.type = "checkbox";
          input.dataset.label = option;
          input.checked = ticked.has(option);
          label.append(input, el("span", {text: option}));
          control.append(label);
        }
        value = () => Array.from(control.querySelectorAll("input:checked")).map((i) => i.dataset.label).join("; ");
      } else if (f.type === "checkbox") {
        control = el("input");
        control.id = id;
        control.type = "checkbox";
        control.checked = Boolean(f.value);
        value = () => (control.checked ? "checked" : "unchecked");
      } else if (f.type === "textarea") {
        control = el("textarea.st-input");
        control.id = id;
        control.rows = 3;
        control.value = f.value || "";
        value = () => control.value;
      } else {
        control = el("input.st-input");
        control.id = id;
        control.type = f.type || "text";
        control.value = f.value || "";
        value = () => control.value;
      }
      control.name = f.name;
      if (f.placeholder) control.placeholder = f.placeholder;
      const label = el("label.st-label", {text: f.label + (f.required ? " *" : "")});
      label.htmlFor = id;
      if (f.type === "checkbox") row.append(control, label);
      else row.append(label, control);
      if (f.hint) row.append(el("div.st-hint", {text: f.hint}));
      box.append(row);
      controls.push({spec: f, control, value, row});
    }
    const submit = b.submit || {};
    const button = el("button.st-button", {text: submit.label || "Submit"});
    button.type = "submit";
    const message = el("div.st-form-msg");
    box.append(button, message);
    const send = async () => {
      state.decided = true;
      button.disabled = true;
      controls.forEach((c) => { c.control.disabled = true; c.control.querySelectorAll && c.control.querySelectorAll("input").forEach((i) => { i.disabled = true; }); });
      const graded = controls.filter((c) => c.spec.answer);
      const oks = await Promise.all(graded.map((c) => state.ctx.grade(c.spec.answer, c.value())));
      for (const c of controls.filter((x) => x.spec.type === "checks" && x.spec.answers)) {
        oks.push(...await gradeChecks(c.spec, c.value() ? c.value().split("; ") : []));
      }
      message.textContent = b.done_text || "Thank you: your form was sent.";
      if (oks.every(Boolean)) state.ctx.succeed(); else state.ctx.fail(submit.failure || "wrong_answer");
    };
    const bar = submit.confirm ? confirmBar(submit.confirm, send) : null;
    if (bar) box.addEventListener("input", () => bar.hide());  // a change needs a new submit
    box.addEventListener("submit", async (e) => {
      e.preventDefault();
      if (state.decided || state.ctx.result !== "pending") return;
      const missing = controls.filter((c) => c.spec.required &&
        (c.spec.type === "checkbox" ? !c.control.checked : !c.value().trim()));
      controls.forEach((c) => c.row.classList.toggle("missing", missing.includes(c)));
      if (missing.length) { message.textContent = "Please fill in the fields marked *."; return; }
      if (!bar) { await send(); return; }
      const given = controls.filter((c) => c.spec.type !== "checkbox" && c.value().trim());
      bar.show("Please check: " + given.map((c) => c.spec.label + ": " + c.value()).join(" \u00b7 "));
    });
    return box;
  }

  /**
   * Grade a group of boxes by membership: each answer field holds when one ticked box is its
   * answer; a ticked box no field asked for is wrong, and unmarks the `only` criterion.
   */
  async function gradeChecks(spec, ticked) {
    const ctx = state.ctx;
    const asked = new Set();
    const oks = [];
    for (const field of spec.answers) {
      let hit = "";
      for (const label of ticked) {
        if (await ctx.matches(field, label)) { hit = label; break; }
      }
      if (hit) asked.add(hit);
      oks.push(hit !== "");
    }
    const clean = ticked.every((label) => asked.has(label));
    spec.answers.forEach((field, i) => ctx.check(field, oks[i] && (field !== spec.only || clean)));
    if (spec.only && !spec.answers.includes(spec.only)) ctx.check(spec.only, clean);
    return [...oks, clean];
  }

  /** A checks group of a task with a checklist names the criterion a wrong box costs. */
  function checkGroups(ctx) {
    const criteria = ctx.episode.checklist || [];
    for (const page of ctx.config.pages || []) {
      for (const b of (page.blocks || []).filter((x) => x.kind === "form")) {
        for (const f of (b.fields || []).filter((x) => x.type === "checks" && x.answers)) {
          if (f.only && !criteria.includes(f.only)) {
            throw new Error("site: checks group " + f.name + ": only = " + f.only + " is no criterion of the task's checklist");
          }
          if (criteria.length && !f.only) {
            throw new Error("site: checks group " + f.name + " needs only = \"CRITERION\", the criterion a wrong box costs");
          }
        }
      }
    }
  }

  function answerBox(b) {
    const box = el("section.st-card.st-answer");
    box.append(el("h3.st-card-title", {text: b.title || "Your answer"}));
    const label = el("label.st-label", {text: b.label || "Answer"});
    const input = el("input.st-input");
    input.id = "answer-" + b.field;
    label.htmlFor = input.id;
    if (b.placeholder) input.placeholder = b.placeholder;
    const button = el("button.st-button", {text: b.button || "Submit"});
    button.id = "submit-" + b.field;
    const send = async () => {
      if (!input.value.trim()) return;
      if (await decide(b.field, input.value, b.failure) !== false) {
        input.disabled = true;
        button.disabled = true;
        button.textContent = "Sent";
      }
    };
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); send(); } });
    button.addEventListener("click", send);
    box.append(label, input, button);
    return box;
  }

  // ---- pages ---------------------------------------------------------------------------------

  function open(id) {
    const page = pageById(id);
    const cfg = state.ctx.config;
    const main = document.getElementById("st-page");
    main.replaceChildren();
    document.querySelectorAll(".st-confirm-bar").forEach((bar) => bar.remove());
    const crumbs = page.crumbs || [];
    if (crumbs.length) main.append(el("div.st-crumbs", {text: crumbs.join("  \u203a  ")}));
    main.append(el("h1.st-title", {text: page.title}));
    if (page.intro) main.append(el("p.st-intro", {text: page.intro}));
    for (const b of page.blocks || []) main.append(block(b));
    main.scrollTop = 0;
    state.page = id;
    document.querySelectorAll(".st-navlink").forEach((a) => a.classList.toggle("active", a.dataset.to === id));
    if (page.final) {
      const goal = cfg.goal || {};
      if (!goal.field) throw new Error("site: a final page needs [config.goal]");
      const answer = () => decide(goal.field, page.title, goal.failure);
      if (goal.confirm) confirmBar(goal.confirm, answer).show(goal.prompt || "Did you find what you were looking for?");
      else answer();
    }
  }

  function build(ctx) {
    state.ctx = ctx;
    const cfg = ctx.config;
    if (!(cfg.pages || []).length) throw new Error("site: [config] needs at least one page");
    checkGroups(ctx);
    document.title = (cfg.site && cfg.site.name) || "Site";
    const root = document.getElementById("app");
    root.style.setProperty("--brand", (cfg.site && cfg.site.color) || "#1f5fbf");
    const body = el("div.st-body");
    const main = el("main.st-page");
    main.id = "st-page";
    body.append(main);
    if ((cfg.aside || []).length) {
      const aside = el("aside.st-aside");
      for (const b of cfg.aside) aside.append(block(b));
      body.append(aside);
    }
    root.append(header(cfg), body);
    if (cfg.footer) root.append(el("footer.st-footer", {text: cfg.footer}));
    open(cfg.pages[0].id);
  }

  DynaCU.task({
    autoplayAudio: false,
    setup(ctx) { build(ctx); },
  });
})();
