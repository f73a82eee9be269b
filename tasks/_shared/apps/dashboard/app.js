/* dashboard: a live service-monitoring dashboard (category E). Metric cards refresh every second
 * with values from the config plus ctx.rng() noise; a canvas chart scrolls with time; a log stream
 * tails; alerts fire and resolve on thresholds; a "Report incident" form takes the answer.
 * Only the current value of a metric is written on the page: the chart draws lines and round axis
 * ticks, never a value label, so a number is readable only while its card shows it.
 *
 * [config]
 *   product = "Vigil", service = "checkout-api", environment = "prod", region = "us-east-1"
 *   clock_start = "14:32:05"            wall clock at t = 0 (header clock, log and alert times)
 *   [[config.metrics]]                  the cards, in order (four fit)
 *     id, label, unit ("ms", "%", "req/s"), base, noise (+/- around base), decimals = 0,
 *     drift = 0 (amplitude of a slow wave), warn / crit (thresholds: colours, alerts, status)
 *   [config.chart]  metrics = ["latency"] (ids drawn, sharing one axis), title, window_s = 60
 *   [config.logs]   rate = 1.5 (lines per second), routes = ["GET /api/cart", ...],
 *                   instances = ["checkout-api-7d9f"], ms_metric = "latency" (request times follow
 *                   it, always below it), error_metric = "errors" (its % is the chance of a 5xx)
 *   [config.report] title, submit, fields = [{field, label, unit, placeholder}]
 *                   (default: one field, the task's first answer field)
 *
 * [[script]] entries (ctx.timeline, seconds after the start):
 *   spike = "<metric id>", peak = 1234, until = T, hold = 3
 *       the metric climbs from t, shows exactly `peak` for `hold` seconds in the middle of
 *       [t, until) and falls back; every other second of the spike reads below the peak
 *   log = "text", level = "WARN"        a log line at t
 *   show = "text", until = T            a banner in the header from t to until
 */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  const LINE_COLORS = ["#4f8cff", "#f2a33a", "#3fbf8a", "#d46ad8"];
  const MAX_LOG_LINES = 9;

  let ctx = null;
  let metrics = [];       // config metrics with defaults
  let spikes = [];        // {metric, t, until, peak, hold}
  let history = {};       // metric id -> Map(k -> value)
  let lastK = null;       // the newest second sampled
  let clockStart = 0;     // seconds since midnight at t = 0
  let chartCfg = {};
  let logCfg = {};
  let pendingLogs = [];   // {t, level, text}
  let alerts = [];        // {metric, label, since, until}
  let banners = [];
  let submitted = false;

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
    const text = v.toLocaleString("en-US", {minimumFractionDigits: d, maximumFractionDigits: d});
    return text;
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
      const ceiling = s.peak - Math.max(Math.abs(s.peak - base) * 0.05, Math.pow(10, -metric.decimals));
      return Math.min(value, ceiling);
    }
    return null;
  }
  function sample(k) {
    for (const m of metrics) {
      const wave = m.drift ? m.drift * Math.sin((k + m.phase) / 23) : 0;
      let v = m.base + wave + m.noise * (ctx.rng() + ctx.rng() - 1);
      const spiked = spikeValue(m, k, v);
      if (spiked !== null) v = spiked;
      v = Math.max(0, v);
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
  function queueLogs(k) {
    const rate = Number(logCfg.rate) || 1.5;
    const n = Math.floor(rate) + (ctx.rng() < rate % 1 ? 1 : 0);
    const routes = logCfg.routes || ["GET /health"];
    const instances = logCfg.instances || [ctx.config.service || "service"];
    const msMetric = metrics.find((m) => m.id === logCfg.ms_metric);
    const errMetric = metrics.find((m) => m.id === logCfg.error_metric);
    for (let i = 0; i < n; i++) {
      const t = k + ctx.rng() * 0.95;
      let ms = 20 + Math.floor(ctx.rng() * 60);
      if (msMetric) ms = Math.max(3, Math.floor(value(msMetric.id, k) * (0.25 + 0.65 * ctx.rng())));
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
      const row = el("div", "log " + l.level.toLowerCase());
      row.append(el("span", "log-time", clockText(l.t, true)), el("span", "log-level", l.level), el("span", "log-text", l.text));
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
      const card = el("div", "card");
      card.id = "card-" + m.id;
      const head = el("div", "card-label", m.label);
      const val = el("div", "card-value");
      val.append(el("span", "num"), el("span", "unit", m.unit));
      const foot = el("div", "card-foot");
      const spark = document.createElementNS("http://www.w3.org/2000/svg", "svg");
      spark.setAttribute("class", "spark");
      spark.setAttribute("viewBox", "0 0 160 28");
      spark.setAttribute("preserveAspectRatio", "none");
      const path = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
      spark.append(path);
      foot.append(spark);
      const limits = [];
      if (m.warn !== undefined) limits.push("warn \u2265 " + fmtValue(m, m.warn));
      foot.append(el("span", "card-limit", limits.join("")));
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
      for (const [j, x] of values) pts.push(((j - (k - 29)) / 29 * 160).toFixed(1) + "," + (26 - x / hi * 24).toFixed(1));
      card.querySelector("polyline").setAttribute("points", pts.join(" "));
    }
  }
  function updateAlerts(k) {
    let worst = "";
    for (const m of metrics) {
      const v = value(m.id, k);
      const sev = severity(m, v);
      if (sev === "crit" || (sev === "warn" && worst !== "crit")) worst = sev;
      const open = alerts.find((a) => a.metric === m.id && a.until === null);
      const limit = m.warn !== undefined ? m.warn : m.crit;
      if (sev && !open) alerts.push({metric: m.id, text: m.label + " above " + fmtValue(m, limit) + " " + m.unit, since: k, until: null});
      if (!sev && open) open.until = k;
    }
    const status = $("status");
    const label = worst === "crit" ? "Critical" : worst === "warn" ? "Degraded" : "Healthy";
    if (status.textContent !== label) { status.textContent = label; status.className = "status " + (worst || "ok"); }
    const box = $("alerts");
    const recent = alerts.slice(-4).reverse();
    const key = JSON.stringify(recent);
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    const firing = alerts.filter((a) => a.until === null).length;
    $("alert-count").textContent = firing ? firing + " firing" : "none firing";
    if (!recent.length) { box.replaceChildren(el("div", "alerts-empty", "All rules OK")); return; }
    box.replaceChildren(...recent.map((a) => {
      const row = el("div", "alert " + (a.until === null ? "firing" : "resolved"));
      row.append(el("span", "alert-dot"));
      const meta = el("div", "alert-meta");
      meta.append(el("div", "alert-text", a.text));
      const when = a.until === null ? "Firing since " + clockText(a.since) : "Resolved at " + clockText(a.until) + " \u00b7 lasted " + (a.until - a.since) + " s";
      meta.append(el("div", "alert-when", when));
      row.append(meta);
      return row;
    }));
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
    let hi = 0;
    for (const id of ids) for (let j = kNow - windowS - 1; j <= kNow; j++) { const v = value(id, j); if (v !== undefined) hi = Math.max(hi, v); }
    for (const id of ids) { const m = metrics.find((x) => x.id === id); if (m.warn !== undefined) hi = Math.max(hi, m.warn * 1.15); }
    const yMax = niceCeil(hi * 1.08);
    const x = (t) => left + (W - left - right) * (1 - (now - t) / windowS);
    const y = (v) => top + (H - top - bottom) * (1 - v / yMax);
    g.clearRect(0, 0, W, H);
    g.font = "11px 'DejaVu Sans', sans-serif";
    g.fillStyle = "#8b93a7";
    g.strokeStyle = "#2a3142";
    g.lineWidth = 1;
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (let i = 0; i <= 4; i++) {
      const v = yMax * i / 4;
      const yy = Math.round(y(v)) + 0.5;
      g.beginPath(); g.moveTo(left, yy); g.lineTo(W - right, yy); g.stroke();
      g.fillText(v >= 1000 ? (v / 1000).toFixed(v % 1000 ? 1 : 0) + "k" : String(Math.round(v * 100) / 100), left - 6, yy);
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
    ids.forEach((id, n) => {
      const m = metrics.find((q) => q.id === id);
      if (m.warn !== undefined) {
        g.setLineDash([5, 4]); g.strokeStyle = "rgba(242, 163, 58, 0.7)";
        g.beginPath(); g.moveTo(left, y(m.warn)); g.lineTo(W - right, y(m.warn)); g.stroke(); g.setLineDash([]);
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
      g.lineTo(x(kNow), y(0)); g.lineTo(x(kNow - windowS - 1), y(0)); g.closePath();
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
      const label = el("label", "r-label");
      label.append(document.createTextNode(f.label || "Value"));
      const wrap = el("div", "r-wrap");
      const input = el("input", "r-input");
      input.type = "text";
      input.dataset.field = f.field;
      input.placeholder = f.placeholder || "";
      input.spellcheck = false;
      wrap.append(input);
      if (f.unit) wrap.append(el("span", "r-unit", f.unit));
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
        for (const i of inputs) ok = (await ctx.matches(i.dataset.field, i.value)) && ok;
        if (ok) ctx.succeed(); else ctx.fail("wrong_answer");
      }
      $("r-msg").textContent = "Incident created";
    });
  }

  // ---- the loop ----------------------------------------------------------------------------------
  function tick() {
    const now = ctx.now();
    const k = Math.floor(now);
    let changed = false;
    while (lastK < k) { lastK += 1; sample(lastK); changed = true; }
    if (changed) { renderCards(lastK); updateAlerts(lastK); $("clock").textContent = clockText(lastK); }
    flushLogs(now);
    const b = banners.find((x) => x.t <= now && (x.until === null || now < x.until));
    const banner = $("banner");
    if (b) { if (banner.textContent !== b.text) banner.textContent = b.text; banner.hidden = false; }
    else if (!banner.hidden) { banner.hidden = true; banner.textContent = ""; }
  }

  DynaCU.task({
    setup(c) {
      ctx = c;
      const cfg = ctx.config;
      const [hh, mm, ss] = String(cfg.clock_start || "09:00:00").split(":").map(Number);
      clockStart = (hh || 0) * 3600 + (mm || 0) * 60 + (ss || 0);
      metrics = (cfg.metrics || []).map((m) => ({
        id: m.id, label: m.label || m.id, unit: m.unit || "", base: Number(m.base) || 0,
        noise: Number(m.noise) || 0, decimals: Number(m.decimals) || 0, drift: Number(m.drift) || 0,
        warn: m.warn, crit: m.crit, phase: 0,
      }));
      metrics.forEach((m) => { history[m.id] = new Map(); m.phase = Math.floor(ctx.rng() * 100); });
      chartCfg = cfg.chart || {};
      logCfg = cfg.logs || {};
      for (const e of ctx.timeline) {
        const until = e.until === null || e.until === undefined ? null : Number(e.until);
        if (e.spike !== undefined) spikes.push({metric: e.spike, t: e.t, until: until === null ? e.t + 6 : until, peak: Number(e.peak), hold: Number(e.hold) || 3});
        else if (e.log !== undefined) pendingLogs.push({t: e.t, level: String(e.level || "INFO").toUpperCase(), text: e.log});
        else if (e.show) banners.push({t: e.t, until, text: e.show});
      }
      document.title = (cfg.service || "Service") + " \u00b7 " + (cfg.product || "Dashboard");
      $("rail-logo").textContent = (cfg.product || "V")[0].toUpperCase();
      $("product").textContent = cfg.product || "Dashboard";
      $("service").textContent = cfg.service || "";
      $("env").textContent = cfg.environment || "prod";
      $("region").textContent = cfg.region || "";
      $("region").hidden = !cfg.region;
      const ids = chartCfg.metrics || (metrics[0] ? [metrics[0].id] : []);
      $("chart-title").textContent = chartCfg.title || ids.map((id) => (metrics.find((m) => m.id === id) || {label: id}).label).join(", ");
      $("legend").replaceChildren(...ids.map((id, n) => {
        const item = el("span", "legend-item");
        const sw = el("span", "swatch");
        sw.style.background = LINE_COLORS[n % LINE_COLORS.length];
        const m = metrics.find((q) => q.id === id) || {label: id, unit: ""};
        item.append(sw, document.createTextNode(m.label + (m.unit ? " (" + m.unit + ")" : "")));
        return item;
      }));
      buildCards();
      buildReport();
      // A minute of history before t = 0, so the chart and sparklines start full.
      const windowS = Number(chartCfg.window_s) || 60;
      lastK = -windowS - 1;
      while (lastK < 0) { lastK += 1; sample(lastK); }
      flushLogs(0);
      renderCards(0);
      updateAlerts(0);
      $("clock").textContent = clockText(0);
      drawChart(0);
    },
    start(c) {
      c.every(0.1, tick);
      c.every(0.25, () => drawChart(c.now()));
    },
  });
})();
