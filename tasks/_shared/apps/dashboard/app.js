/* dashboard: a live monitoring dashboard (category E). Metric cards refresh every second with
 * values from the config plus ctx.rng() noise; a canvas chart scrolls with time; a log stream
 * tails; alerts fire and resolve on thresholds or from the script; the panel at the bottom right is
 * a "Report incident" form (the answer), a runbook of actions, a scaling form or a fleet table.
 * Only the current value of a metric is written on the page: the chart draws lines and round axis
 * ticks, never a value label, so a number is readable only while its card shows it. Log lines and
 * scripted alerts are in the DOM only while they are on screen.
 *
 * [config]
 *   product = "Vigil", service = "checkout-api", environment = "prod", region = "us-east-1"
 *   section = "Services"                breadcrumb between product and service
 *   clock_start = "14:32:05"            wall clock at t = 0 (header clock, log and alert times)
 *   [[config.metrics]]                  the cards, in order (four fit)
 *     id, label, unit ("ms", "%", "req/s"), base, noise (+/- around base), decimals = 0,
 *     drift = 0 (amplitude of a slow wave), warn / crit (thresholds: colours, alerts, status),
 *     show_crit = false (the card and chart show the crit line instead of the warn line),
 *     signed = false (values may go below zero, e.g. a freezer's temperature)
 *   [config.chart]  metrics = ["latency"] (ids drawn, sharing one axis), title, window_s = 60,
 *                   min / max (a fixed axis, e.g. 49.5 and 50.5 for grid frequency)
 *   [config.logs]   rate = 1.5 (lines per second), routes = ["GET /api/cart", ...],
 *                   instances = ["checkout-api-7d9f"], ms_metric = "latency" (request times follow
 *                   it, always below it), error_metric = "errors" (its % is the chance of a 5xx)
 *                   templates = [{text, level = "INFO", weight = 1}]: background lines other than
 *                   HTTP requests; {instance}, {route}, {ms}, {n2}, {n3}, {n4} (random digits)
 *                   and {pick:a|b|c} are filled in
 *                   title = "Logs", subtitle = "tail -f"
 *   [config.alerts] mode = "rules" (default: threshold alerts from warn/crit, plus scripted ones),
 *                   "muted" (no alerts; `muted_text` says why) or "triage" (scripted alerts only,
 *                   each with an Ack button and, with `page_label`, a Page button; the panel fills
 *                   the side column). Triage judging: ack_s = 5 (seconds from an alert's
 *                   appearance to act on it), ack_fields / page_fields (answer fields: an alert
 *                   whose id matches one of them must be acked / paged within ack_s, else
 *                   "timeout"; acking or paging any other alert is the failure "wrong_ack" /
 *                   "wrong_page"); success at ends_at (default: ack_s + 0.5 after the last alert
 *                   appears) when every required action was done. title = "Alerts".
 *   [config.bridge] title = "On-call bridge", people = [{speaker, name}]: who is on the call, in
 *                   the header; a person's ring lights while their clip plays
 *   The bottom-right panel, one of:
 *   [config.report] title, submit, fields = [{field, label, unit, placeholder}]
 *                   (default: one field, the task's first answer field)
 *   [config.runbook] title, subtitle, actions = [{label, detail, button = "Run"}], field (the answer field an
 *                   action's label is checked against), failure = "wrong_action"
 *   [config.scale]  title, subtitle, service, running (replicas now), note (instance type), label,
 *                   submit, field (answer field for
 *                   the desired replica count), failure = "wrong_replicas"
 *   [config.fleet]  title, filter (placeholder), button (row button label), done (its label once
 *                   used), columns = [..],
 *                   items = [{id, cells = [..]}], field (answer field for the row's id),
 *                   failure = "wrong_target"
 *   runbook, scale and fleet act once, judged against [config.trigger]:
 *   [config.trigger] metric + above (or below): opens the second the metric's card first shows a
 *                   value at or past it; or at = T (episode seconds). Acting before it opens is the
 *                   failure "too_early"; window_s (default 10) after it opens the page answers
 *                   "timeout". Without a trigger the control is judged on its choice alone.
 *
 * [[script]] entries (ctx.timeline, seconds after the start):
 *   spike = "<metric id>", peak = 1234, until = T, hold = 3
 *       the metric moves from t, shows exactly `peak` for `hold` seconds in the middle of
 *       [t, until) and moves back; every other second of the spike reads short of the peak
 *       (a peak below the base is a dip: every other second reads above it)
 *   ramp = "<metric id>", to = X, until = T
 *       the metric's base moves linearly from its level at t to X at until and stays there
 *   log = "text", level = "WARN"        a log line at t
 *   alert = "ID", text, severity = "critical" | "warning", source (host), env, until = T
 *       an alert that appears at t and is gone at until (or stays)
 *   show = "text", until = T            a banner in the header from t to until
 *
 * Privileged state for scripted solutions: window.dashboard.opened (the trigger's opening time,
 * episode seconds, or null), window.dashboard.alerts (ids of the alerts on screen).
 */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const {el, initials} = DynaCU.ui;
  const LINE_COLORS = ["#4f8cff", "#f2a33a", "#3fbf8a", "#d46ad8"];
  const MAX_LOG_LINES = 9;

  let ctx = null;
  let metrics = [];       // config metrics with defaults
  let spikes = [];        // {metric, t, until, peak, hold}
  let ramps = [];         // {metric, t, until, to}
  let history = {};       // metric id -> Map(k -> value)
  let lastK = null;       // the newest second sampled
  let clockStart = 0;     // seconds since midnight at t = 0
  let chartCfg = {};
  let logCfg = {};
  let alertCfg = {};
  let pendingLogs = [];   // {t, level, text}
  let alerts = [];        // rules mode: {metric, text, since, until} (scripted: id, expires)
  let scripted = [];      // scripted alerts from the timeline: {id, t, until, text, severity, source, env}
  let triage = new Map(); // triage mode: id -> {alert, row, shownAt, need, done}
  let banners = [];
  let submitted = false;
  let acted = false;      // a runbook / scale / fleet control was used
  let trigger = null;     // {metric, above, below, at, window_s}
  const state = {opened: null, alerts: []};
  window.dashboard = state;

  // ---- formatting -------------------------------------------------------------------------------
  function clockText(t, ms) {
    let s = clockStart + t;
    s = ((s % 86400) + 86400) % 86400;
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.floor(s % 60);
    const base = [h, m, sec].map((x) => String(x).padStart(2, "0")).join(":");
    return ms ? base + "." + String(Math.floor((s % 1) * 1000)).padStart(3, "0") : base;
  }
  function fmtValue(metric, v) {
    const d = metric.decimals;
    return v.toLocaleString("en-US", {minimumFractionDigits: d, maximumFractionDigits: d});
  }
  function niceCeil(v) {
    if (v <= 0) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  // ---- the data: one sample per metric per second, deterministic from the seed ----------------
  function spikeValue(metric, k, base) {
    for (const s of spikes) {
      if (s.metric !== metric.id || k < s.t || k >= s.until) continue;
      const span = Math.max(1, Math.round(s.until - s.t));
      const hold = Math.max(1, Math.min(span, Math.round(s.hold)));
      const up = Math.floor((span - hold) / 2);
      const i = Math.floor(k - s.t);
      if (i >= up && i < up + hold) return s.peak;
      const frac = i < up ? (i + 1) / (up + 1) : (span - i) / (span - up - hold + 1);
      const value = base + (s.peak - base) * frac * (0.82 + 0.1 * ctx.rng());
      const margin = Math.max(Math.abs(s.peak - base) * 0.05, Math.pow(10, -metric.decimals));
      // A spike reads below its peak everywhere else, a dip above its lowest value.
      return s.peak >= base ? Math.min(value, s.peak - margin) : Math.max(value, s.peak + margin);
    }
    return null;
  }
  function rampedBase(m, k) {
    let level = m.base;
    for (const r of ramps) {
      if (r.metric !== m.id || k < r.t) continue;
      const f = Math.min(1, (k - r.t) / Math.max(1e-9, r.until - r.t));
      level = level + (r.to - level) * f;
    }
    return level;
  }
  function sample(k) {
    for (const m of metrics) {
      const wave = m.drift ? m.drift * Math.sin((k + m.phase) / 23) : 0;
      let v = rampedBase(m, k) + wave + m.noise * (ctx.rng() + ctx.rng() - 1);
      const spiked = spikeValue(m, k, v);
      if (spiked !== null) v = spiked;
      if (!m.signed) v = Math.max(0, v);
      const f = Math.pow(10, m.decimals);
      history[m.id].set(k, Math.round(v * f) / f);
      history[m.id].delete(k - 400);
    }
    queueLogs(k);
  }
  function value(id, k) {
    const h = history[id];
    return h ? h.get(k) : undefined;
  }

  // ---- logs ---------------------------------------------------------------------------------------
  function pick(list) { return list[Math.floor(ctx.rng() * list.length)]; }
  function digits(n) { let s = String(1 + Math.floor(ctx.rng() * 9)); while (s.length < n) s += Math.floor(ctx.rng() * 10); return s; }
  function fill(template, vars) {
    return template.replace(/\{(instance|route|ms|n2|n3|n4|pick:[^}]*)\}/g, (all, key) => {
      if (key.startsWith("pick:")) return pick(key.slice(5).split("|"));
      if (key === "n2") return digits(2);
      if (key === "n3") return digits(3);
      if (key === "n4") return digits(4);
      return String(vars[key]);
    });
  }
  function queueLogs(k) {
    const rate = Number(logCfg.rate) || 1.5;
    const n = Math.floor(rate) + (ctx.rng() < rate % 1 ? 1 : 0);
    const routes = logCfg.routes || ["GET /health"];
    const instances = logCfg.instances || [ctx.config.service || "service"];
    const templates = logCfg.templates || [];
    const weights = templates.map((x) => Number(x.weight) || 1);
    const total = weights.reduce((a, b) => a + b, 0);
    const msMetric = metrics.find((m) => m.id === logCfg.ms_metric);
    const errMetric = metrics.find((m) => m.id === logCfg.error_metric);
    for (let i = 0; i < n; i++) {
      const t = k + ctx.rng() * 0.95;
      let ms = 20 + Math.floor(ctx.rng() * 60);
      if (msMetric) ms = Math.max(3, Math.floor(value(msMetric.id, k) * (0.25 + 0.65 * ctx.rng())));
      if (templates.length) {
        let r = ctx.rng() * total, j = 0;
        while (j < templates.length - 1 && r >= weights[j]) { r -= weights[j]; j += 1; }
        const tpl = templates[j];
        const text = fill(String(tpl.text), {instance: pick(instances), route: pick(routes), ms});
        pendingLogs.push({t, level: String(tpl.level || "INFO").toUpperCase(), text});
        continue;
      }
      const errPct = errMetric ? value(errMetric.id, k) : 0;
      const failed = ctx.rng() * 100 < errPct;
      const status = failed ? pick([500, 502, 503]) : pick([200, 200, 200, 201, 204, 304]);
      const level = failed ? "ERROR" : ms > ((msMetric && msMetric.warn) || Infinity) ? "WARN" : "INFO";
      pendingLogs.push({t, level, text: pick(instances) + "  " + pick(routes) + " " + status + " " + ms + "ms"});
    }
  }
  function flushLogs(now) {
    const due = pendingLogs.filter((l) => l.t <= now).sort((a, b) => a.t - b.t);
    if (!due.length) return;
    pendingLogs = pendingLogs.filter((l) => l.t > now);
    const box = $("logs");
    for (const l of due) {
      const row = el("div", {class: "log " + l.level.toLowerCase()});
      row.append(el("span.log-time", {text: clockText(l.t, true)}), el("span.log-level", {text: l.level}), el("span.log-text", {text: l.text}));
      box.append(row);
    }
    while (box.children.length > MAX_LOG_LINES) box.firstChild.remove();
  }

  // ---- cards, status, alerts --------------------------------------------------------------------
  function severity(m, v) {
    if (v === undefined) return "";
    if (m.crit !== undefined && v >= m.crit) return "crit";
    if (m.warn !== undefined && v >= m.warn) return "warn";
    return "";
  }
  function buildCards() {
    const box = $("cards");
    for (const m of metrics) {
      const card = el("div.card");
      card.id = "card-" + m.id;
      const head = el("div.card-label", {text: m.label});
      const val = el("div.card-value");
      val.append(el("span.num"), el("span.unit", {text: m.unit}));
      const foot = el("div.card-foot");
      const spark = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      spark.setAttribute("class", "spark");
      spark.setAttribute("viewBox", "0 0 160 28");
      spark.setAttribute("preserveAspectRatio", "none");
      const path = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
      spark.append(path);
      foot.append(spark);
      const limits = [];
      if (m.crit !== undefined && m.show_crit) limits.push("crit \u2265 " + fmtValue(m, m.crit));
      else if (m.warn !== undefined) limits.push("warn \u2265 " + fmtValue(m, m.warn));
      foot.append(el("span.card-limit", {text: limits.join("")}));
      card.append(head, val, foot);
      box.append(card);
    }
  }
  function renderCards(k) {
    for (const m of metrics) {
      const card = $("card-" + m.id);
      const v = value(m.id, k);
      const num = card.querySelector(".num");
      const text = v === undefined ? "\u2013" : fmtValue(m, v);
      if (num.textContent !== text) num.textContent = text;
      card.className = "card " + severity(m, v);
      const pts = [];
      const values = [];
      for (let j = k - 29; j <= k; j++) { const x = value(m.id, j); if (x !== undefined) values.push([j, x]); }
      const hi = Math.max(...values.map((p) => p[1]), m.base * 1.3, 1e-9);
      const lo = m.signed ? Math.min(...values.map((p) => p[1]), 0) : 0;
      for (const [j, x] of values) pts.push(((j - (k - 29)) / 29 * 160).toFixed(1) + "," + (26 - (x - lo) / (hi - lo || 1) * 24).toFixed(1));
      card.querySelector("polyline").setAttribute("points", pts.join(" "));
    }
  }
  function setStatus(worst) {
    const status = $("status");
    const label = worst === "crit" ? "Critical" : worst === "warn" ? "Degraded" : "Healthy";
    if (status.textContent !== label) { status.textContent = label; status.className = "status " + (worst || "ok"); }
  }
  function updateAlerts(k, now) {
    let worst = "";
    for (const m of metrics) {
      const sev = severity(m, value(m.id, k));
      if (sev === "crit" || (sev === "warn" && worst !== "crit")) worst = sev;
    }
    const mode = alertCfg.mode || "rules";
    if (mode === "triage") { updateTriage(now, worst); return; }
    if (mode === "rules") {
      for (const m of metrics) {
        const sev = severity(m, value(m.id, k));
        const open = alerts.find((a) => a.metric === m.id && a.until === null);
        const limit = m.warn !== undefined ? m.warn : m.crit;
        if (sev && !open) alerts.push({metric: m.id, text: m.label + " above " + fmtValue(m, limit) + " " + m.unit, since: k, until: null});
        if (!sev && open) open.until = k;
      }
      for (const a of scripted) {
        const live = a.t <= now && (a.until === null || now < a.until);
        const shown = alerts.find((x) => x.id === a.id);
        if (live && !shown && !a.seen) { a.seen = true; alerts.push({id: a.id, text: a.text, source: a.source, severity: a.severity, since: Math.floor(a.t), until: null}); }
        if (!live && shown) alerts.splice(alerts.indexOf(shown), 1);  // gone from the list: transient
        if (live && a.severity === "critical") worst = "crit";
        else if (live && worst !== "crit") worst = "warn";
      }
    }
    setStatus(worst);
    state.alerts = alerts.filter((a) => a.until === null && a.id).map((a) => a.id);
    const box = $("alerts");
    if (mode === "muted") {
      if (!box.dataset.key) {
        box.dataset.key = "muted";
        $("alert-count").textContent = "muted";
        box.replaceChildren(el("div.alerts-empty", {text: alertCfg.muted_text || "Notifications are muted for this service."}));
      }
      return;
    }
    const recent = alerts.slice(-4).reverse();
    const key = JSON.stringify(recent);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    const firing = alerts.filter((a) => a.until === null).length;
    $("alert-count").textContent = firing ? firing + " firing" : "none firing";
    if (!recent.length) { box.replaceChildren(el("div.alerts-empty", {text: "All rules OK"})); return; }
    box.replaceChildren(...recent.map((a) => {
      const row = el("div", {class: "alert " + (a.until === null ? "firing" : "resolved") + (a.severity === "warning" ? " warning" : "")});
      row.append(el("span.alert-dot"));
      const meta = el("div.alert-meta");
      meta.append(el("div.alert-text", {text: a.text}));
      if (a.source) meta.append(el("div.alert-source", {text: a.source}));
      const when = a.until === null ? "Firing since " + clockText(a.since) : "Resolved at " + clockText(a.until) + " \u00b7 lasted " + (a.until - a.since) + " s";
      meta.append(el("div.alert-when", {text: when}));
      row.append(meta);
      return row;
    }));
  }

  // ---- triage: scripted alerts with Ack / Page ------------------------------------------------
  function triageRow(a) {
    const row = el("div", {class: "incident " + (a.severity === "critical" ? "critical" : "warning")});
    row.dataset.alert = a.id;
    const top = el("div.inc-top");
    top.append(el("span.inc-sev", {text: a.severity === "critical" ? "CRITICAL" : "WARNING"}), el("span.inc-id", {text: a.id}));
    if (a.env) top.append(el("span", {class: "inc-env " + String(a.env).toLowerCase(), text: a.env}));
    top.append(el("span.inc-when", {text: clockText(Math.floor(a.t))}));
    const text = el("div.inc-text", {text: a.text});
    const foot = el("div.inc-foot");
    foot.append(el("span.inc-source", {text: a.source || ""}));
    const ack = el("button.inc-btn.ack", {text: "Ack"});
    ack.type = "button";
    ack.addEventListener("click", () => act(a.id, "ack"));
    foot.append(ack);
    if (alertCfg.page_label) {
      const page = el("button.inc-btn.page", {text: alertCfg.page_label});
      page.type = "button";
      page.addEventListener("click", () => act(a.id, "page"));
      foot.append(page);
    }
    row.append(top, text, foot);
    return row;
  }
  function act(id, what) {
    const item = triage.get(id);
    if (!item || item.done || ctx.result !== "pending" || !window.DynaCU.started) return;
    item.done = what;
    item.row.classList.add("done");
    item.row.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    item.row.querySelector(".inc-source").textContent = what === "ack" ? "Acknowledged by you" : "Paged owner \u00b7 " + (item.alert.source || "");
    if (item.need !== what) ctx.fail(what === "ack" ? "wrong_ack" : "wrong_page");
    else ctx.check(item.alert.field, true);
  }
  function updateTriage(now, worstMetric) {
    const box = $("alerts");
    let worst = worstMetric;
    let changed = false;
    for (const a of scripted) {
      const live = a.t <= now && (a.until === null || now < a.until);
      const item = triage.get(a.id);
      if (live && !item && !a.seen) {
        a.seen = true;
        const row = triageRow(a);
        triage.set(a.id, {alert: a, row, shownAt: now, need: a.need, done: null});
        box.prepend(row);
        changed = true;
      } else if (!live && item && !item.gone) {
        item.gone = true;
        item.row.remove();
        changed = true;
      }
      if (live && !(item && item.done)) worst = a.severity === "critical" ? "crit" : (worst || "warn");
    }
    for (const item of triage.values()) {
      if (item.need && !item.done && now > item.shownAt + ackSeconds()) { ctx.timeout(); return; }
    }
    setStatus(worst);
    const open = Array.from(triage.values()).filter((x) => !x.gone);
    state.alerts = open.map((x) => x.alert.id);
    if (changed || !box.dataset.key) {
      box.dataset.key = "triage";
      const firing = open.filter((x) => !x.done).length;
      $("alert-count").textContent = firing ? firing + " open" : "none open";
      const empty = box.querySelector(".alerts-empty");
      if (open.length && empty) empty.remove();
      if (!open.length && !empty) box.append(el("div.alerts-empty", {text: "No open alerts"}));
    }
    if (now >= triageEnd() && Array.from(triage.values()).every((x) => !x.need || x.done) &&
        scripted.every((a) => a.seen)) ctx.succeed();
  }
  function ackSeconds() { return Number(alertCfg.ack_s) || 5; }
  function triageEnd() {
    if (alertCfg.ends_at !== undefined) return Number(alertCfg.ends_at);
    return Math.max(0, ...scripted.map((a) => a.t)) + ackSeconds() + 0.5;
  }
  async function triageNeeds() {
    for (const a of scripted) {
      a.need = null;
      for (const f of alertCfg.ack_fields || []) if (await ctx.matches(f, a.id)) { a.need = "ack"; a.field = f; }
      for (const f of alertCfg.page_fields || []) if (await ctx.matches(f, a.id)) { a.need = "page"; a.field = f; }
    }
  }

  // ---- the chart ---------------------------------------------------------------------------------
  function drawChart(now) {
    const canvas = $("chart");
    const g = canvas.getContext("2d");
    const W = canvas.width, H = canvas.height;
    const left = 52, right = 10, top = 10, bottom = 24;
    const windowS = Number(chartCfg.window_s) || 60;
    const ids = (chartCfg.metrics || [metrics[0].id]).filter((id) => history[id]);
    const kNow = Math.floor(now);
    let hi = 0, lo = 0;
    for (const id of ids) for (let j = kNow - windowS - 1; j <= kNow; j++) { const v = value(id, j); if (v !== undefined) { hi = Math.max(hi, v); lo = Math.min(lo, v); } }
    for (const id of ids) { const m = metrics.find((x) => x.id === id); if (m.warn !== undefined) hi = Math.max(hi, m.warn * 1.15); }
    let yMin = 0, yMax;
    if (chartCfg.min !== undefined || chartCfg.max !== undefined) {
      // A fixed axis (e.g. grid frequency around 50 Hz, or temperatures below zero).
      yMin = Number(chartCfg.min ?? 0); yMax = Number(chartCfg.max ?? niceCeil(hi * 1.08));
    } else {
      yMax = niceCeil(hi * 1.08);
      if (lo < 0) yMin = -niceCeil(-lo * 1.08);
    }
    const x = (t) => left + (W - left - right) * (1 - (now - t) / windowS);
    const y = (v) => top + (H - top - bottom) * (1 - (v - yMin) / (yMax - yMin));
    g.clearRect(0, 0, W, H);
    g.font = "11px 'DejaVu Sans', sans-serif";
    g.fillStyle = "#8b93a7";
    g.strokeStyle = "#2a3142";
    g.lineWidth = 1;
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (let i = 0; i <= 4; i++) {
      const v = yMin + (yMax - yMin) * i / 4;
      const yy = Math.round(y(v)) + 0.5;
      g.beginPath(); g.moveTo(left, yy); g.lineTo(W - right, yy); g.stroke();
      g.fillText(Math.abs(v) >= 1000 ? (v / 1000).toFixed(v % 1000 ? 1 : 0) + "k" : String(Math.round(v * 100) / 100), left - 6, yy);
    }
    g.textAlign = "center";
    g.textBaseline = "top";
    const step = windowS >= 60 ? 15 : 10;
    for (let s = Math.ceil((clockStart + now - windowS) / step) * step; s <= clockStart + now; s += step) {
      const t = s - clockStart;
      const xx = x(t);
      if (xx < left + 16 || xx > W - right - 16) continue;
      g.beginPath(); g.moveTo(Math.round(xx) + 0.5, top); g.lineTo(Math.round(xx) + 0.5, H - bottom); g.stroke();
      g.fillText(clockText(t), xx, H - bottom + 6);
    }
    g.save();
    g.beginPath(); g.rect(left, top, W - left - right, H - top - bottom); g.clip();
    const floor = yMin <= 0 && yMax >= 0 ? 0 : yMin;  // the area fills down to zero, else to the axis
    ids.forEach((id, n) => {
      const m = metrics.find((q) => q.id === id);
      const line = m.crit !== undefined && m.show_crit ? m.crit : m.warn;
      if (line !== undefined) {
        g.setLineDash([5, 4]); g.strokeStyle = m.show_crit ? "rgba(255, 92, 92, 0.75)" : "rgba(242, 163, 58, 0.7)";
        g.beginPath(); g.moveTo(left, y(line)); g.lineTo(W - right, y(line)); g.stroke(); g.setLineDash([]);
      }
      const color = LINE_COLORS[n % LINE_COLORS.length];
      g.strokeStyle = color; g.lineWidth = 2; g.lineJoin = "round";
      g.beginPath();
      let started = false;
      for (let j = kNow - windowS - 1; j <= kNow; j++) {
        const v = value(id, j);
        if (v === undefined) continue;
        if (!started) { g.moveTo(x(j), y(v)); started = true; } else g.lineTo(x(j), y(v));
      }
      g.stroke();
      g.lineTo(x(kNow), y(floor)); g.lineTo(x(kNow - windowS - 1), y(floor)); g.closePath();
      g.globalAlpha = 0.12; g.fillStyle = color; g.fill(); g.globalAlpha = 1;
      g.lineWidth = 1;
    });
    g.restore();
  }

  // ---- the report form ---------------------------------------------------------------------------
  function buildReport() {
    const r = ctx.config.report || {};
    const firstField = Object.keys(ctx.episode.answers)[0];
    const fields = r.fields && r.fields.length ? r.fields : [{field: firstField, label: "Value"}];
    $("report-title").textContent = r.title || "Report incident";
    $("r-submit").textContent = r.submit || "Create incident";
    $("r-service").value = ctx.config.service || "";
    const box = $("report-fields");
    for (const f of fields) {
      const label = el("label.r-label");
      label.append(document.createTextNode(f.label || "Value"));
      const wrap = el("div.r-wrap");
      const input = el("input.r-input");
      input.type = "text";
      input.dataset.field = f.field;
      input.placeholder = f.placeholder || "";
      input.spellcheck = false;
      wrap.append(input);
      if (f.unit) wrap.append(el("span.r-unit", {text: f.unit}));
      label.append(wrap);
      box.append(label);
    }
    for (const b of document.querySelectorAll(".sev-btn")) {
      b.addEventListener("click", () => {
        document.querySelectorAll(".sev-btn").forEach((x) => x.classList.toggle("on", x === b));
      });
    }
    $("report").addEventListener("submit", async (event) => {
      event.preventDefault();
      if (submitted || !window.DynaCU.started || ctx.result !== "pending") return;
      const inputs = Array.from(box.querySelectorAll("input"));
      if (inputs.some((i) => !i.value.trim())) { $("r-msg").textContent = "Fill in every field"; return; }
      submitted = true;
      inputs.forEach((i) => { i.readOnly = true; });
      $("r-notes").readOnly = true;
      $("r-submit").disabled = true;
      if (inputs.length === 1) await ctx.checkAnswer(inputs[0].dataset.field, inputs[0].value);
      else {
        let ok = true;
        for (const i of inputs) ok = (await ctx.grade(i.dataset.field, i.value)) && ok;
        if (ok) ctx.succeed(); else ctx.fail("wrong_answer");
      }
      $("r-msg").textContent = "Incident created";
    });
  }

  // ---- runbook, scale and fleet controls, judged against the trigger -----------------------------
  /** One use of a control: too early, the right choice (success) or the control's failure. */
  async function judge(field, text, failure, note) {
    if (acted || !window.DynaCU.started || ctx.result !== "pending") return false;
    acted = true;
    if (note) note();
    if (trigger && state.opened === null) { ctx.fail("too_early"); return true; }
    const ok = await ctx.grade(field, text);
    if (ok) ctx.succeed(); else ctx.fail(failure);
    return true;
  }
  function controlPanel(title, subtitle) {
    $("report").hidden = true;
    const panel = $("control");
    panel.hidden = false;
    const head = el("div.panel-head");
    head.append(el("span.panel-title", {text: title}));
    if (subtitle) head.append(el("span.panel-sub", {text: subtitle}));
    const body = el("div.control-body");
    panel.replaceChildren(head, body);
    return body;
  }
  function buildRunbook(r) {
    const body = controlPanel(r.title || "Runbook", r.subtitle || "");
    for (const a of r.actions || []) {
      const item = el("div.rb-item");
      const meta = el("div.rb-meta");
      meta.append(el("div.rb-label", {text: a.label}), el("div.rb-detail", {text: a.detail || ""}));
      const btn = el("button.rb-run", {text: a.button || "Run"});
      btn.type = "button";
      btn.dataset.action = a.label;
      btn.addEventListener("click", () => judge(r.field, a.label, r.failure || "wrong_action", () => {
        btn.textContent = "Running\u2026";
        body.querySelectorAll("button").forEach((b) => { b.disabled = true; });
        item.classList.add("on");
      }));
      item.append(meta, btn);
      body.append(item);
    }
  }
  function buildScale(sc) {
    const body = controlPanel(sc.title || "Scaling", sc.subtitle || "Autoscaling off");
    const rows = el("div.sc-rows");
    const kv = (k, v) => { const row = el("div.sc-row"); row.append(el("span.sc-k", {text: k}), el("span.sc-v", {text: v})); return row; };
    rows.append(kv("Deployment", sc.service || ctx.config.service || ""), kv("Running replicas", String(sc.running ?? "")));
    if (sc.note) rows.append(kv("Instance type", sc.note));
    const label = el("label.r-label", {text: sc.label || "Desired replicas"});
    const input = el("input.r-input.sc-input");
    input.type = "text"; input.id = "scale-input"; input.spellcheck = false;
    input.value = String(sc.running ?? "");
    label.append(input);
    const btn = el("button.r-submit", {text: sc.submit || "Apply"});
    btn.type = "button"; btn.id = "scale-apply";
    const msg = el("span.r-msg");
    const actions = el("div.r-actions");
    actions.append(btn, msg);
    btn.addEventListener("click", () => {
      if (!input.value.trim()) { msg.textContent = "Enter a replica count"; return; }
      judge(sc.field, input.value, sc.failure || "wrong_replicas", () => {
        input.readOnly = true; btn.disabled = true; msg.textContent = "Scaling to " + input.value.trim() + "\u2026";
      });
    });
    body.append(rows, label, actions);
  }
  function buildFleet(fl) {
    const body = controlPanel(fl.title || "Fleet", (fl.items || []).length + " units");
    const filter = el("input.r-input.fl-filter");
    filter.type = "text"; filter.id = "fleet-filter"; filter.spellcheck = false;
    filter.placeholder = fl.filter || "Filter by id";
    const table = el("div.fl-table");
    const head = el("div.fl-row.fl-head");
    for (const c of ["ID"].concat(fl.columns || [])) head.append(el("span.fl-cell", {text: c}));
    head.append(el("span.fl-cell"));
    const list = el("div.fl-list");
    const rows = (fl.items || []).map((item) => {
      const row = el("div.fl-row");
      row.dataset.id = item.id;
      row.append(el("span.fl-cell.fl-id", {text: item.id}));
      for (const c of item.cells || []) row.append(el("span.fl-cell", {text: c}));
      const btn = el("button.fl-btn", {text: fl.button || "Act"});
      btn.type = "button";
      btn.addEventListener("click", () => judge(fl.field, item.id, fl.failure || "wrong_target", () => {
        list.querySelectorAll("button").forEach((b) => { b.disabled = true; });
        row.classList.add("on");
        btn.textContent = fl.done || "Sent";
      }));
      row.append(btn);
      list.append(row);
      return row;
    });
    filter.addEventListener("input", () => {
      const key = (text) => text.toLowerCase().replace(/[^a-z0-9]/g, "");  // "ab 12" finds AB-12
      const q = key(filter.value);
      for (const row of rows) row.hidden = !!q && !key(row.dataset.id).includes(q);
    });
    table.append(head, list);
    body.append(filter, table);
  }
  function checkTrigger(k, now) {
    if (!trigger) return;
    if (state.opened === null) {
      let open = false;
      if (trigger.at !== undefined) open = now >= Number(trigger.at);
      else {
        const v = value(trigger.metric, k);
        if (v !== undefined && trigger.above !== undefined) open = v >= Number(trigger.above);
        if (v !== undefined && trigger.below !== undefined) open = v <= Number(trigger.below);
      }
      if (open) state.opened = now;
    }
    if (state.opened !== null && !acted && now > state.opened + (Number(trigger.window_s) || 10)) ctx.timeout();
  }

  // ---- the on-call bridge ------------------------------------------------------------------------
  function buildBridge(b) {
    const box = $("bridge");
    box.hidden = false;
    box.replaceChildren(el("span.br-title", {text: b.title || "On-call bridge"}));
    for (const p of b.people || []) {
      const who = el("span.br-person");
      who.dataset.speaker = p.speaker || "";
      who.append(el("span.br-avatar", {text: initials(p.name)}), el("span.br-name", {text: p.name || ""}));
      box.append(who);
    }
  }
  function updateBridge(now) {
    for (const who of document.querySelectorAll(".br-person")) {
      const talking = ctx.audioClips.some((c) => c.speaker === who.dataset.speaker && now >= c.t && now < c.t + (c.duration || 0));
      who.classList.toggle("speaking", talking);
    }
  }

  // ---- the loop ----------------------------------------------------------------------------------
  function tick() {
    const now = ctx.now();
    const k = Math.floor(now);
    let changed = false;
    while (lastK < k) { lastK += 1; sample(lastK); changed = true; }
    if (changed) { renderCards(lastK); $("clock").textContent = clockText(lastK); }
    updateAlerts(lastK, now);
    checkTrigger(lastK, now);
    flushLogs(now);
    updateBridge(now);
    const b = banners.find((x) => x.t <= now && (x.until === null || now < x.until));
    const banner = $("banner");
    if (b) { if (banner.textContent !== b.text) banner.textContent = b.text; banner.hidden = false; }
    else if (!banner.hidden) { banner.hidden = true; banner.textContent = ""; }
  }

  DynaCU.task({
    async setup(c) {
      ctx = c;
      const cfg = ctx.config;
      const [hh, mm, ss] = String(cfg.clock_start || "09:00:00").split(":").map(Number);
      clockStart = (hh || 0) * 3600 + (mm || 0) * 60 + (ss || 0);
      metrics = (cfg.metrics || []).map((m) => ({
        id: m.id, label: m.label || m.id, unit: m.unit || "", base: Number(m.base) || 0,
        noise: Number(m.noise) || 0, decimals: Number(m.decimals) || 0, drift: Number(m.drift) || 0,
        warn: m.warn, crit: m.crit, phase: 0, signed: !!m.signed, show_crit: !!m.show_crit,
      }));
      metrics.forEach((m) => { history[m.id] = new Map(); m.phase = Math.floor(ctx.rng() * 100); });
      chartCfg = cfg.chart || {};
      logCfg = cfg.logs || {};
      alertCfg = cfg.alerts || {};
      trigger = cfg.trigger || null;
      for (const e of ctx.timeline) {
        const until = e.until === null || e.until === undefined ? null : Number(e.until);
        if (e.spike !== undefined) spikes.push({metric: e.spike, t: e.t, until: until === null ? e.t + 6 : until, peak: Number(e.peak), hold: Number(e.hold) || 3});
        else if (e.ramp !== undefined) ramps.push({metric: e.ramp, t: e.t, until: until === null ? e.t + 10 : until, to: Number(e.to)});
        else if (e.log !== undefined) pendingLogs.push({t: e.t, level: String(e.level || "INFO").toUpperCase(), text: e.log});
        else if (e.alert !== undefined) scripted.push({id: String(e.alert), t: e.t, until, text: e.text || "", severity: e.severity === "warning" ? "warning" : "critical", source: e.source || "", env: e.env || "", seen: false});
        else if (e.show) banners.push({t: e.t, until, text: e.show});
      }
      ramps.sort((a, b) => a.t - b.t);
      if (alertCfg.mode === "triage") await triageNeeds();
      document.title = (cfg.service || "Service") + " \u00b7 " + (cfg.product || "Dashboard");
      $("rail-logo").textContent = (cfg.product || "V")[0].toUpperCase();
      $("product").textContent = cfg.product || "Dashboard";
      $("section").textContent = cfg.section || "Services";
      $("service").textContent = cfg.service || "";
      $("env").textContent = cfg.environment || "prod";
      $("region").textContent = cfg.region || "";
      $("region").hidden = !cfg.region;
      if (logCfg.title) $("log-title").textContent = logCfg.title;
      if (logCfg.subtitle) $("log-sub").textContent = logCfg.subtitle;
      if (alertCfg.title) $("alerts-title").textContent = alertCfg.title;
      if (alertCfg.mode === "triage") document.body.classList.add("triage");
      if (cfg.bridge) buildBridge(cfg.bridge);
      const ids = chartCfg.metrics || (metrics[0] ? [metrics[0].id] : []);
      $("chart-title").textContent = chartCfg.title || ids.map((id) => (metrics.find((m) => m.id === id) || {label: id}).label).join(", ");
      $("legend").replaceChildren(...ids.map((id, n) => {
        const item = el("span.legend-item");
        const sw = el("span.swatch");
        sw.style.background = LINE_COLORS[n % LINE_COLORS.length];
        const m = metrics.find((q) => q.id === id) || {label: id, unit: ""};
        item.append(sw, document.createTextNode(m.label + (m.unit ? " (" + m.unit + ")" : "")));
        return item;
      }));
      buildCards();
      if (cfg.runbook) buildRunbook(cfg.runbook);
      else if (cfg.scale) buildScale(cfg.scale);
      else if (cfg.fleet) buildFleet(cfg.fleet);
      else if (alertCfg.mode !== "triage") buildReport();
      // A minute of history before t = 0, so the chart and sparklines start full.
      const windowS = Number(chartCfg.window_s) || 60;
      lastK = -windowS - 1;
      while (lastK < 0) { lastK += 1; sample(lastK); }
      flushLogs(0);
      renderCards(0);
      updateAlerts(0, 0);
      $("clock").textContent = clockText(0);
      drawChart(0);
    },
    start(c) {
      c.every(0.1, tick);
      c.every(0.25, () => drawChart(c.now()));
    },
  });
})();
