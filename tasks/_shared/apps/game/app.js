/* game: a browser mini-game on a casual-games site (whack-a-mole style reaction game).
 *
 * Targets pop out of a grid of holes at cells drawn from ctx.rng(); each stays up for a window
 * and goes. Hitting `goal` targets wins (ctx.succeed()); the episode's time limit is the
 * round's clock, after which the runtime answers "timeout". The target sequence (cell, pause,
 * decoy or not) is drawn per spawn, up front, so it depends on the seed only, never on play.
 * A target is in the DOM only while it is up (.gm-target, data-cell = its cell, row-major
 * from 0, data-n = its spawn number).
 *
 * [config]
 *   site         "PlayNook"                     the games portal
 *   game         "Whack-a-Mole"                 the game's title; studio, rating: its byline
 *   rows, cols   3, 3                           the grid of holes
 *   goal         5                              hits to win
 *   window_s     2.5                            seconds a target stays up
 *   gap_s        [0.5, 1.0]                     pause before the next target (seeded in range)
 *   countdown_s  3                              "3, 2, 1, Go!" before the first target
 *   size         110                            target size in px
 *   max_misses   0                              clicks that hit nothing (or a decoy) allowed;
 *                                               reaching it fails with `miss_failure`
 *                                               (default "too_many_misses"); 0: no limit
 *   decoy_rate   0.0                            share of targets that are decoys (bombs) that
 *                                               must not be hit: hitting one is a miss
 *   round_s                                     the clock shown; default the episode's limit
 *   intro        "Whack 5 moles!"               the line on the countdown screen
 *   how_to       ["...", ...]                   the sidebar's "How to play"
 *   leaderboard  [{name, score}]                the sidebar's high scores
 *
 * [[script]] lines the page reads (ctx.timeline):
 *   show         a banner over the play field (until `until`)
 *   window_s, gap_s, decoy_rate   change the rule from that moment on (e.g. speed up)
 */
(function () {
  "use strict";

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

  const SEQUENCE = 600;  // spawns drawn up front; more than any round can use
  const HIT_SLACK = 8;   // px around a target that still count as a hit

  const state = {
    ctx: null, cfg: null, rules: null, field: null, cells: [], seq: [],
    spawn: 0, target: null, score: 0, misses: 0, playing: false, over: false,
  };

  const num = (v, d) => (typeof v === "number" && isFinite(v) ? v : d);

  // ---- page ---------------------------------------------------------------------------------

  function build(ctx) {
    const cfg = ctx.config;
    state.cfg = cfg;
    state.rules = {
      window_s: num(cfg.window_s, 2.5),
      gap_s: Array.isArray(cfg.gap_s) ? cfg.gap_s : [0.5, 1.0],
      decoy_rate: num(cfg.decoy_rate, 0),
    };
    document.title = (cfg.game || "Game") + " - " + (cfg.site || "Games");
    const goal = num(cfg.goal, 5);
    const maxMisses = num(cfg.max_misses, 0);
    const app = document.getElementById("app");

    const header = el("header.gm-top", {}, [
      el("div.gm-logo", {}, [el("span.mark", {html: logoSvg()}), el("span", {text: cfg.site || "Games"})]),
      el("nav.gm-nav", {}, ["Home", "New", "Action", "Puzzle", "Arcade", "Leaderboards"].map((n, i) =>
        el("a" + (i === 4 ? ".active" : ""), {href: "#", text: n}))),
      el("div.gm-search", {text: "Search games"}),
      el("button.gm-signin", {text: "Sign in"}),
    ]);

    const hud = el("div.gm-hud", {}, [
      pill("Score", "gm-score", "0 / " + goal),
      pill("Time", "gm-time", fmt(roundLength())),
      maxMisses ? pill("Misses", "gm-misses", "0 / " + maxMisses) : null,
      el("div.gm-hud-spacer"),
      el("span.gm-sound", {html: speakerSvg()}),
      el("span.gm-full", {html: fullSvg()}),
    ]);
    const field = el("div.gm-field", {id: "field"}, []);
    const stage = el("div.gm-stage", {}, [field, el("div.gm-banner", {id: "banner"}), el("div.gm-overlay", {id: "overlay"})]);
    const card = el("section.gm-card", {}, [
      el("div.gm-title", {}, [
        el("h1", {text: cfg.game || "Game"}),
        el("span.gm-by", {text: cfg.studio ? "by " + cfg.studio : ""}),
        el("span.gm-stars", {text: stars(num(cfg.rating, 4.5))}),
        el("span.gm-plays", {text: cfg.plays || ""}),
      ]),
      hud,
      stage,
    ]);
    const side = el("aside.gm-side", {}, [
      sideCard("How to play", el("ul.gm-howto", {}, (cfg.how_to || []).map((t) => el("li", {text: t})))),
      sideCard("Leaderboard", el("ol.gm-board", {}, (cfg.leaderboard || []).map((r, i) =>
        el("li", {}, [el("span.rank", {text: String(i + 1)}), el("span.name", {text: r.name}), el("span.pts", {text: String(r.score)})])))),
      cfg.more && sideCard("More games", el("div.gm-more", {}, cfg.more.map((g, i) =>
        el("div.gm-thumb.t" + (i % 4), {}, [el("span", {text: g})])))),
    ]);
    app.append(header, el("main.gm-main", {}, [card, side]));

    // Holes at fixed places in the field; targets are added and removed at their centres.
    state.field = field;
    const rows = num(cfg.rows, 3), cols = num(cfg.cols, 3);
    const rect = field.getBoundingClientRect();
    const size = num(cfg.size, 110);
    field.style.setProperty("--size", size + "px");
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const cx = (c + 0.5) * rect.width / cols, cy = (r + 0.5) * rect.height / rows;
        const hole = el("div.gm-hole", {style: `left:${cx}px;top:${cy}px`}, [el("div.back"), el("div.pit"), el("div.front")]);
        field.append(hole);
        state.cells.push({cx, cy, hole});
      }
    }
    field.addEventListener("mousedown", onPress);
  }

  function pill(label, id, value) {
    return el("div.gm-pill", {}, [el("span.l", {text: label}), el("span.v", {id, text: value})]);
  }

  function sideCard(title, body) {
    return el("section.gm-sidecard", {}, [el("h2", {text: title}), body]);
  }

  function stars(r) {
    const full = Math.round(r);
    return "\u2605".repeat(full) + "\u2606".repeat(Math.max(0, 5 - full)) + " " + r.toFixed(1);
  }

  function fmt(s) {
    s = Math.max(0, Math.ceil(s));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }

  function roundLength() {
    return num(state.cfg.round_s, state.ctx.episode.timeLimit);
  }

  function logoSvg() {
    return '<svg viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#ffb703"/><path d="M9 12h14a5 5 0 0 1 5 5v1a5 5 0 0 1-9 3h-6a5 5 0 0 1-9-3v-1a5 5 0 0 1 5-5z" fill="#1d1b33"/><circle cx="21" cy="16.5" r="1.6" fill="#ffb703"/><circle cx="24" cy="19" r="1.6" fill="#ffb703"/><path d="M10 15v5M7.5 17.5h5" stroke="#ffb703" stroke-width="1.8"/></svg>';
  }
  function speakerSvg() {
    return '<svg viewBox="0 0 24 24"><path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor"/><path d="M16 8a5 5 0 0 1 0 8M18.5 5.5a8.5 8.5 0 0 1 0 13" stroke="currentColor" stroke-width="1.8" fill="none"/></svg>';
  }
  function fullSvg() {
    return '<svg viewBox="0 0 24 24"><path d="M4 9V4h5M20 9V4h-5M4 15v5h5M20 15v5h-5" stroke="currentColor" stroke-width="2" fill="none"/></svg>';
  }

  // ---- the round ----------------------------------------------------------------------------

  /** Every spawn's cell, pause and decoy draw, from the seed alone. */
  function drawSequence(ctx, cellCount) {
    let last = -1;
    for (let k = 0; k < SEQUENCE; k++) {
      let cell = Math.floor(ctx.rng() * (cellCount - (last >= 0 ? 1 : 0)));
      if (last >= 0 && cell >= last) cell += 1;  // never the same hole twice in a row
      state.seq.push({cell, gap: ctx.rng(), decoy: ctx.rng()});
      last = cell;
    }
  }

  function overlay(html, cls) {
    const o = document.getElementById("overlay");
    o.className = "gm-overlay" + (html ? " shown " + (cls || "") : "");
    o.innerHTML = html || "";
  }

  function spawnNext(delay) {
    const ctx = state.ctx;
    ctx.at(ctx.now() + delay, () => {
      if (state.over) return;
      const k = state.spawn++;
      const draw = state.seq[k % SEQUENCE];
      const decoy = draw.decoy < state.rules.decoy_rate;
      const cell = state.cells[draw.cell];
      const node = el("div.gm-target" + (decoy ? ".decoy" : ".mole"), {"data-cell": String(draw.cell), "data-n": String(k)},
        [decoy ? bomb() : mole()]);
      cell.hole.querySelector(".pit").append(node);
      const target = {k, decoy, cell, node, gone: false};
      state.target = target;
      ctx.at(ctx.now() + state.rules.window_s, () => {
        if (target.gone) return;
        retire(target, "down");
        spawnNext(pause(k));
      });
    });
  }

  function pause(k) {
    const [lo, hi] = state.rules.gap_s;
    return lo + (hi - lo) * state.seq[k % SEQUENCE].gap;
  }

  function retire(target, how) {
    target.gone = true;
    if (state.target === target) state.target = null;
    const node = target.node;
    node.classList.add(how);
    setTimeout(() => node.remove(), how === "down" ? 140 : 220);
  }

  function mole() {
    return el("div.mole-body", {}, [
      el("i.ear.l"), el("i.ear.r"), el("i.eye.l"), el("i.eye.r"), el("i.snout", {}, [el("i.nose")]), el("i.teeth"),
    ]);
  }

  function bomb() {
    return el("div.bomb-body", {}, [el("i.cap"), el("i.fuse"), el("i.spark"), el("i.shine")]);
  }

  function onPress(e) {
    if (!state.playing || state.over || state.ctx.result !== "pending") return;
    const rect = state.field.getBoundingClientRect();
    const x = e.clientX - rect.left, y = e.clientY - rect.top;
    const size = num(state.cfg.size, 110);
    const t = state.target;
    const hit = t && !t.gone &&
      Math.abs(x - t.cell.cx) <= size / 2 + HIT_SLACK &&
      y >= t.cell.cy - size / 2 - HIT_SLACK && y <= t.cell.cy + size * 0.5 + HIT_SLACK;
    if (hit && !t.decoy) {
      retire(t, "bonk");
      burst(x, y, "+1");
      state.score += 1;
      document.getElementById("gm-score").textContent = state.score + " / " + num(state.cfg.goal, 5);
      if (state.score >= num(state.cfg.goal, 5)) return win();
      spawnNext(pause(t.k));
      return;
    }
    if (hit && t.decoy) {
      retire(t, "boom");
      spawnNext(pause(t.k));
    }
    miss(x, y);
  }

  function miss(x, y) {
    state.misses += 1;
    burst(x, y, "miss");
    const max = num(state.cfg.max_misses, 0);
    if (!max) return;
    document.getElementById("gm-misses").textContent = state.misses + " / " + max;
    if (state.misses >= max) {
      state.over = true;
      if (state.target) retire(state.target, "down");
      overlay("<h2>Too many misses</h2><p>Game over</p>", "lose");
      state.ctx.fail(state.cfg.miss_failure || "too_many_misses");
    }
  }

  function burst(x, y, text) {
    const b = el("div.gm-burst" + (text === "miss" ? ".miss" : ""), {text, style: `left:${x}px;top:${y}px`});
    state.field.append(b);
    setTimeout(() => b.remove(), 600);
  }

  function win() {
    state.over = true;
    if (state.target) retire(state.target, "down");
    overlay("<h2>You win!</h2><p>" + state.score + " hits</p>", "win");
    state.ctx.succeed();
  }

  function startRound(ctx) {
    const cd = num(state.cfg.countdown_s, 3);
    const intro = state.cfg.intro || "Get ready!";
    const esc = (s) => s.replace(/[&<>]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;"}[c]));
    for (let i = 0; i < cd; i++) {
      ctx.at(i, () => overlay("<p>" + esc(intro) + "</p><h2>" + (cd - i) + "</h2>", "count"));
    }
    ctx.at(cd, () => {
      overlay("<h2>Go!</h2>", "count go");
      state.playing = true;
      spawnNext(0.4);
    });
    ctx.at(cd + 0.6, () => { if (!state.over) overlay(""); });
    const end = roundLength();
    ctx.every(0.25, () => {
      document.getElementById("gm-time").textContent = fmt(end - ctx.now());
    });
    ctx.at(end, () => {
      state.over = true;
      document.getElementById("gm-time").textContent = fmt(0);
      if (state.target) retire(state.target, "down");
      overlay("<h2>Time's up!</h2><p>" + state.score + " hits</p>", "lose");
    });
  }

  function timeline(ctx) {
    const banner = document.getElementById("banner");
    for (const line of ctx.timeline) {
      ctx.at(line.t, () => {
        for (const key of ["window_s", "gap_s", "decoy_rate"]) if (key in line) state.rules[key] = line[key];
        if (line.show) {
          banner.textContent = line.show;
          banner.classList.add("shown");
        }
      });
      if (line.show && line.until != null) {
        ctx.at(line.until, () => {
          if (banner.textContent === line.show) { banner.textContent = ""; banner.classList.remove("shown"); }
        });
      }
    }
  }

  DynaCU.task({
    setup(ctx) {
      state.ctx = ctx;
      build(ctx);
      drawSequence(ctx, state.cells.length);
    },
    start(ctx) {
      startRound(ctx);
      timeline(ctx);
    },
  });
})();
