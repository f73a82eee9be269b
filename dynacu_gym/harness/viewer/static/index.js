/* dynacu view: the run's index. Every episode in one table that filters and sorts. */
(function () {
  "use strict";
  const {el} = DynaCUView;
  const data = DynaCUView.data();
  const app = document.getElementById("app");

  function outcome(row) {
    if (row.infra_error) return ["infra", "infra error"];
    if (row.success === true) return ["ok", row.result || "success"];
    if (row.success === false) return ["fail", row.result || "failed"];
    return ["none", row.result || "-"];
  }

  const COLUMNS = [
    ["task", "task"], ["mode", "mode"], ["agent", "agent"], ["model", "model"],
    ["repeat", "rep", true], ["result", "result"], ["steps", "steps", true],
    ["wall_s", "time (s)", true], ["credit", "credit", true], ["infra_error", "infra error"],
  ];
  const rows = data.episodes;
  const taskOrder = (id) => {
    const m = /^(?:(.*)\/)?([A-Z])(\d+)$/.exec(id) || [];
    return [m[1] || "", m[2] || id, Number(m[3] || 0)];
  };
  let sortKey = "task", sortDesc = false;

  const search = el("input", {type: "search", placeholder: "filter: task, mode, agent, result...", "aria-label": "filter"});
  const selects = {};
  function select(key, label) {
    const values = [...new Set(rows.map((r) => String(r[key] ?? "")))].filter((v) => v).sort();
    const s = el("select", {"aria-label": label, "data-key": key},
      el("option", {value: "", text: `every ${label}`}),
      values.map((v) => el("option", {value: v, text: v})));
    selects[key] = s;
    return s;
  }
  const outcomeSelect = el("select", {"aria-label": "outcome"},
    el("option", {value: "", text: "every outcome"}),
    el("option", {value: "ok", text: "succeeded"}),
    el("option", {value: "fail", text: "failed"}),
    el("option", {value: "infra", text: "infra error"}),
    el("option", {value: "none", text: "unfinished"}));
  const count = el("span", {class: "muted count"});
  const tbody = el("tbody");
  const head = el("tr", {}, COLUMNS.map(([key, label]) => el("th", {"data-key": key, text: label, onclick: () => {
    if (sortKey === key) sortDesc = !sortDesc; else { sortKey = key; sortDesc = false; }
    render();
  }})));

  function compare(a, b) {
    let x = a[sortKey], y = b[sortKey];
    if (sortKey === "task") { x = taskOrder(x); y = taskOrder(y); }
    if (Array.isArray(x)) {
      for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
      return 0;
    }
    if (typeof x === "number" && typeof y === "number") return x - y;
    return String(x ?? "").localeCompare(String(y ?? ""));
  }

  function visible() {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    return rows.filter((r) => {
      for (const [key, s] of Object.entries(selects)) if (s.value && String(r[key] ?? "") !== s.value) return false;
      if (outcomeSelect.value && outcome(r)[0] !== outcomeSelect.value) return false;
      const text = COLUMNS.map(([k]) => String(r[k] ?? "")).join(" ").toLowerCase();
      return words.every((w) => text.includes(w));
    });
  }

  function render() {
    const shown = visible().sort((a, b) => (sortDesc ? -1 : 1) * compare(a, b));
    for (const th of head.children) {
      th.classList.toggle("sorted", th.dataset.key === sortKey);
      th.classList.toggle("desc", th.dataset.key === sortKey && sortDesc);
    }
    tbody.replaceChildren(...shown.map((r) => {
      const [kind, label] = outcome(r);
      const taskCell = r.page ? el("a", {href: r.page, text: r.task}) : r.task;
      return el("tr", {"data-name": r.name},
        el("td", {}, taskCell, r.trace ? "" : el("span", {class: "muted", text: " (no trace)"})),
        el("td", {text: r.mode}), el("td", {text: r.agent}), el("td", {text: r.model}),
        el("td", {class: "num", text: r.repeat}),
        el("td", {}, el("span", {class: `badge ${kind}`, text: label})),
        el("td", {class: "num", text: r.steps}),
        el("td", {class: "num", text: r.wall_s === "" ? "" : Number(r.wall_s).toFixed(1)}),
        el("td", {class: "num", text: r.credit === "" ? "" : Number(r.credit).toFixed(2)}),
        el("td", {class: "err", text: r.infra_error || (r.problems || []).join("; ")}));
    }));
    count.textContent = `${shown.length} of ${rows.length} episodes`;
  }

  const ok = rows.filter((r) => r.success === true).length;
  const finished = rows.filter((r) => r.success !== null && r.success !== undefined).length;
  app.replaceChildren(
    el("h1", {text: "Run " + data.run.split("/").pop()}),
    el("p", {class: "muted"}, `${data.run} - ${rows.length} episodes, ${ok} of ${finished} finished ones succeeded - built ${data.built_at}`),
    data.problems.length ? el("ul", {class: "problems"}, data.problems.map((p) => el("li", {text: `${p.where}: ${p.what}`}))) : "",
    data.charts.length ? el("div", {class: "charts"}, data.charts.map((src) => el("img", {src, alt: src, loading: "lazy"})))
      : el("p", {class: "muted", text: data.no_charts ? `No charts: ${data.no_charts}.` : ""}),
    el("div", {class: "filters"}, search, select("mode", "mode"), select("agent", "agent"), select("model", "model"),
      select("category", "category"), outcomeSelect, count),
    el("table", {class: "episodes"}, el("thead", {}, head), tbody),
  );
  search.addEventListener("input", render);
  for (const s of [...Object.values(selects), outcomeSelect]) s.addEventListener("change", render);
  render();
})();
