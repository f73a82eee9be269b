/* game: a casual-games portal page with one browser mini-game embedded.
 *
 * The portal chrome (site header, the game's title and byline, a HUD of score, clock and
 * misses or lives, the play field with its countdown and banners, and a sidebar with "How to
 * play", a leaderboard and more games) is shared; `kind` picks the game in the field. Scoring
 * and winning are decided by the page: the goal reached is ctx.succeed(), a named failure is
 * ctx.fail(), and a round whose clock or answer window runs out is ctx.timeout(). A player who
 * does nothing never fails by name: the round runs out ("timeout"). Everything a game draws at
 * random (cells, delays, lanes, colours, sequences) is drawn up front from ctx.rng(), so it
 * depends on the seed only, never on play. Moving and transient things (targets, lit pads,
 * flashed numbers, falling words, fruit, cars, notes) are in the DOM only while on screen.
 *
 * Partial credit: a task's [checklist] may name `score_1` .. `score_N` (N = goal): each holds
 * once the score has reached it, so the credit is the share of the goal reached (a dense reward
 * for training with reward_mode="checklist").
 *
 * window.game (privileged; for scripted solutions and tests, never shown) holds the game's
 * state: `kind`, `phase`, `score`, and `plan`, what a perfect player would do now:
 * `plan.wait` (seconds until the next thing to act on; 0: act now), and, as the kind needs,
 * `plan.x`/`plan.y` (the screen point to click), `plan.key` (the key to press) or `plan.word`
 * (the word to type). `state` is the kind's own state (its seeded tables of spawns, fruit,
 * cars or notes with their times, the sequence, the rules in force), for tests.
 *
 * [config] (every kind)
 *   kind         "whack"                        whack | reaction | listen | simon | flash |
 *                                               words | redlight | catch | drive | rhythm
 *   site         "PlayNook"                     the games portal
 *   game         "Whack-a-Mole"                 the game's title; studio, rating, plays: its byline
 *   goal         5                              points to win (hits, rounds, words, steps...)
 *   score_label  "Score"                        the HUD's label for the score
 *   countdown_s  3                              "3, 2, 1, Go!" before play starts
 *   max_misses   0                              mistakes allowed (clicks that hit nothing, early
 *                                               clicks, wrong words or arrows); reaching it fails
 *                                               with `miss_failure` (default "too_many_misses");
 *                                               0: no limit
 *   lives        0                              lives (catch, drive): losing the last fails with
 *                                               `lives_failure` (default "out_of_lives")
 *   round_s                                     the round's clock; default the episode's limit
 *   start_key                                   e.g. "Space": the round waits for this key (or a
 *                                               click on the field); then script times of the
 *                                               game's lines and clips count from that moment
 *   intro        "Whack 5 moles!"               the line on the countdown screen
 *   how_to       ["...", ...]                   the sidebar's "How to play"
 *   leaderboard  [{name, score}]                the sidebar's high scores
 *   more         ["Bubble Pop", ...]            the sidebar's "More games"
 *
 * kind = "whack": targets pop out of a grid of holes (.gm-target, data-cell = its cell,
 * row-major from 0, data-n = its spawn number) and stay up for a window.
 *   rows, cols   3, 3                           the grid of holes
 *   window_s     2.5                            seconds a target stays up
 *   gap_s        [0.5, 1.0]                     pause before the next target (seeded in range)
 *   size         110                            target size in px
 *   decoy_rate   0.0                            share of targets that are decoys (bombs) that
 *                                               must not be hit: hitting one is a miss
 *
 * kind = "reaction": a panel waits (red) for a seeded delay, then turns green (.rx-pad.go);
 * click within `window_s` to score the round. A click while it is red is a false start (a
 * miss); a round nobody clicks in time is lost and the next one starts.
 *   delay_s      [1.5, 4.0]                     wait before green (seeded per attempt)
 *   window_s     2.0                            seconds the panel stays green
 *
 * kind = "listen": a board of every `colors` x `shapes` tile (button.ls-tile, data-label =
 * "<color> <shape>"), reshuffled for each call. Script lines with `field` are the calls (what
 * is said names the tile); the tile clicked is checked against that answer field: a wrong
 * tile fails with `wrong_failure` (default "wrong_tile"), no tile within `window_s` of the
 * call is "timeout". All calls right wins.
 *   colors       ["red", "blue", "green"]       red blue green yellow purple orange pink
 *   shapes       ["circle", "square", "star"]   circle square triangle star heart diamond
 *   window_s     8                              seconds from a call's start to tap its tile
 *
 * kind = "simon": four pads light up in a seeded sequence (.sm-pad.lit while lit); repeat it
 * by clicking the pads. Each round shows one more step; a wrong pad fails with
 * `wrong_failure` (default "wrong_sequence"); `input_s` without a click is "timeout".
 *   lengths      [3, 4, 5]                      steps shown in each round (one round each)
 *   step_s       0.8                            seconds between steps; lit_s 0.5 each is lit
 *   input_s      6                              seconds allowed before each click
 *
 * kind = "flash": script lines with `field` and `show` flash a number (.fl-digits) from `t`
 * until `until`; then type it and press Enter. It is checked against that answer field: a
 * wrong one fails with `wrong_failure` (default "wrong_number"), none within `answer_s` is
 * "timeout". All levels right wins.
 *   answer_s     8                              seconds after the flash to send the number
 *
 * kind = "words": words (.wd-word, data-word) fall from seeded places; type one and press
 * Enter to shoot it down. Enter on a word that is not falling is a miss; a word that lands
 * is only lost. `goal` words before the round ends wins.
 *   words        ["...", ...]                   the words, dropped in a seeded order
 *   fall_s       8                              seconds a word takes to land
 *   spawn_s      [1.8, 2.6]                     seconds between words (seeded in range)
 *
 * kind = "redlight": press `keys` (or click the Step button) to take a stride toward the
 * finish. Script lines with `light = "green"` or `"red"` are the caller's calls (what is
 * said is not shown): green from the call's start, red from the end of the call plus
 * `grace_s`; the round starts on red. A stride on red fails with `caught_failure` (default
 * "caught"); `goal` strides wins. A stride takes `stride_s`: a press before it ends does
 * nothing, so a long enough `goal` needs more than one green light.
 *   grace_s      1.0                            seconds after a red call ends before it counts
 *   stride_s     0                              seconds one stride takes
 *   keys         ["Space", "ArrowUp"]           keys that take a stride
 *
 * kind = "catch": fruit of seeded `colors` fall down seeded lanes; click a lane (or press
 * ArrowLeft/ArrowRight) to move the basket. Catching a fruit the rule allows scores; one it
 * does not costs a life; a fruit not caught is only lost. `rule` is "all", a colour, or
 * "not <colour>"; script lines with `rule` change it from the end of their call plus
 * `grace_s` (the call is only heard).
 *   lanes        5                              lanes across the field
 *   colors       ["red", "green", "yellow", "purple"]   fruit colours (seeded per fruit)
 *   fall_s       2.6                            seconds a fruit takes to fall
 *   spawn_s      [0.8, 1.1]                     seconds between fruit (seeded in range)
 *   rule         "all"                          what may be caught at the start
 *   grace_s      0.5                            seconds after a rule call ends before it counts
 *
 * kind = "drive": a car on a three-lane road; click a lane (or press ArrowLeft/ArrowRight) to
 * change lanes. Traffic (.dr-car) comes down seeded lanes and is seen `approach_s` ahead;
 * a crash costs a life; the round's clock is the route: reaching its end wins. Script lines
 * with `open = "left" | "middle" | "right"` (with what the co-driver says) bring a fog bank
 * and, `lead_s` after the call starts, barriers (.dr-barrier) across the other two lanes,
 * seen only `reveal_s` before they are reached.
 *   approach_s   2.2                            seconds traffic is in view
 *   gap_s        [0.9, 1.5]                     seconds between cars (seeded in range)
 *   lead_s       4.5                            seconds from a call to its barriers
 *   reveal_s     0.5                            seconds barriers are visible before impact
 *
 * kind = "rhythm": arrows (.rh-note, data-lane) fall in four lanes to the hit line on a beat;
 * press the arrow key as each crosses the line (within `window_s`). A key with no arrow
 * there, or the wrong arrow, is a miss; an arrow let by is only lost. Script lines with
 * `mirror = true | false` turn mirror mode on or off from the end of their call (only
 * heard): while on, each arrow is answered with its opposite (left/right, up/down). Beats
 * during a call are rests. `goal` hits before the song ends wins; then "timeout".
 *   beat_s       0.9                            seconds between beats
 *   beats        36                             beats in the song
 *   fall_s       1.8                            seconds an arrow is in view
 *   rest_rate    0.15                           share of beats without an arrow (seeded)
 *   window_s     0.22                           seconds either side of the beat that count
 *
 * [[script]] lines the page reads (ctx.timeline), besides the kinds' own keys above:
 *   show         a banner over the play field (until `until`)
 *   window_s, gap_s, decoy_rate   (whack) change the rule from that moment on (e.g. speed up)
 */
(function () {
  "use strict";
  const {el} = DynaCU.ui;
  const fmt = (s) => DynaCU.ui.clock(s, {up: true});  // a countdown

  const num = (v, d) => (typeof v === "number" && isFinite(v) ? v : d);
  const range = (v, d) => (Array.isArray(v) && v.length === 2 ? v : d);
  const clamp0 = (s) => Math.max(0, Math.round(s * 100) / 100);

  // Shared round state; each kind keeps its own in its closure.
  const S = {
    ctx: null, cfg: null, kind: null, field: null, score: 0, misses: 0, lives: 0,
    playing: false, over: false, t0: 0, begun: false,
  };

  /** Seconds since the round began (the start key, or the episode's start). */
  const rnow = () => S.ctx.now() - S.t0;
  /** Run fn at round time t. */
  const roundAt = (t, fn) => S.ctx.at(S.t0 + t, fn);
  const goal = () => num(S.cfg.goal, 5);
  const pending = () => !S.over && S.ctx.result === "pending";

  /** The end of the call a timeline line was said with (its start if it has no clip). */
  function clipEnd(line) {
    const clip = S.ctx.audioClips.find((c) => Math.abs(c.t - line.t) < 1e-6);
    return line.t + (clip ? clip.duration : 0);
  }

  function keyName(e) {
    return e.key === " " ? "Space" : e.key;
  }

  // ---- page ---------------------------------------------------------------------------------

  function build(ctx) {
    const cfg = ctx.config;
    S.cfg = cfg;
    document.title = (cfg.game || "Game") + " - " + (cfg.site || "Games");
    const maxMisses = num(cfg.max_misses, 0);
    S.lives = num(cfg.lives, 0);
    const app = document.getElementById("app");

    const header = el("header.gm-top", {}, [
      el("div.gm-logo", {}, [el("span.mark", {html: logoSvg()}), el("span", {text: cfg.site || "Games"})]),
      el("nav.gm-nav", {}, ["Home", "New", "Action", "Puzzle", "Arcade", "Leaderboards"].map((n, i) =>
        el("a" + (i === 4 ? ".active" : ""), {href: "#", text: n}))),
      el("div.gm-search", {text: "Search games"}),
      el("button.gm-signin", {text: "Sign in"}),
    ]);

    const hud = el("div.gm-hud", {}, [
      pill(cfg.score_label || "Score", "gm-score", "0 / " + goal()),
      pill("Time", "gm-time", fmt(roundLength())),
      maxMisses ? pill("Misses", "gm-misses", "0 / " + maxMisses) : null,
      S.lives ? pill("Lives", "gm-lives", hearts()) : null,
      el("div.gm-hud-spacer"),
      el("span.gm-sound", {html: speakerSvg()}),
      el("span.gm-full", {html: fullSvg()}),
    ]);
    const field = el("div.gm-field.k-" + S.kind.name, {id: "field"}, []);
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
    S.field = field;
    S.kind.build(field, ctx);
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

  function hearts() {
    const max = num(S.cfg.lives, 0);
    return "\u2665".repeat(Math.max(0, S.lives)) + "\u2661".repeat(Math.max(0, max - S.lives));
  }

  function roundLength() {
    return num(S.cfg.round_s, S.ctx.episode.timeLimit);
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

  // ---- shared round machinery ---------------------------------------------------------------

  function overlay(html, cls) {
    const o = document.getElementById("overlay");
    o.className = "gm-overlay" + (html ? " shown " + (cls || "") : "");
    o.innerHTML = html || "";
  }

  const esc = (s) => String(s).replace(/[&<>]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;"}[c]));

  function setScore(n) {
    S.score = n;
    document.getElementById("gm-score").textContent = n + " / " + goal();
    for (let i = 1; i <= n; i++) S.ctx.check("score_" + i);  // criteria the task's checklist has
  }

  function burst(x, y, text, cls) {
    const b = el("div.gm-burst" + (cls ? "." + cls : text === "miss" ? ".miss" : ""), {text, style: `left:${x}px;top:${y}px`});
    S.field.append(b);
    setTimeout(() => b.remove(), 600);
  }

  /** A mistake: counts toward max_misses; the last one allowed ends the game. */
  function miss(x, y, text) {
    S.misses += 1;
    if (x !== undefined) burst(x, y, text || "miss", "miss");
    const max = num(S.cfg.max_misses, 0);
    if (!max) return;
    document.getElementById("gm-misses").textContent = S.misses + " / " + max;
    if (S.misses >= max) lose(S.cfg.miss_failure || "too_many_misses", "Too many misses");
  }

  function loseLife() {
    S.lives -= 1;
    const node = document.getElementById("gm-lives");
    if (node) node.textContent = hearts();
    if (S.lives <= 0) lose(S.cfg.lives_failure || "out_of_lives", "Out of lives");
  }

  function stopKind() {
    if (S.kind.stop) S.kind.stop();
  }

  function win(detail) {
    if (S.over) return;
    S.over = true;
    stopKind();
    overlay("<h2>You win!</h2><p>" + esc(detail || S.score + " points") + "</p>", "win");
    S.ctx.succeed();
  }

  function lose(failure, title, detail) {
    if (S.over) return;
    S.over = true;
    stopKind();
    overlay("<h2>" + esc(title) + "</h2><p>" + esc(detail || "Game over") + "</p>", "lose");
    S.ctx.fail(failure);
  }

  /** A window the game gave the player closed: the episode's "timeout". */
  function timeUp(title, detail) {
    if (S.over) return;
    S.over = true;
    stopKind();
    overlay("<h2>" + esc(title || "Time's up!") + "</h2><p>" + esc(detail || S.score + " points") + "</p>", "lose");
    S.ctx.timeout();
  }

  function beginRound() {
    const ctx = S.ctx;
    S.begun = true;
    S.t0 = ctx.now();
    ctx.audioClips.forEach((clip, i) => ctx.playClip(i, clip.t));
    const cd = num(S.cfg.countdown_s, 3);
    if (S.kind.begin) S.kind.begin(cd);
    const intro = S.cfg.intro || "Get ready!";
    for (let i = 0; i < cd; i++) {
      roundAt(i, () => overlay("<p>" + esc(intro) + "</p><h2>" + (cd - i) + "</h2>", "count"));
    }
    roundAt(cd, () => {
      overlay("<h2>Go!</h2>", "count go");
      S.playing = true;
      S.kind.play(cd);
    });
    roundAt(cd + 0.6, () => { if (!S.over) overlay(""); });
    const end = roundLength();
    ctx.every(0.25, () => {
      document.getElementById("gm-time").textContent = fmt(end - rnow());
    });
    roundAt(end, () => {
      document.getElementById("gm-time").textContent = fmt(0);
      if (S.over) return;
      if (S.kind.roundOver) S.kind.roundOver();
      else timeUp();
    });
    timeline(ctx);
  }

  function startGate() {
    const key = S.cfg.start_key;
    const label = key === "Space" ? "Space" : key;
    overlay('<div class="gm-play"><svg viewBox="0 0 24 24"><path d="M8 5v14l11-7z" fill="currentColor"/></svg></div>' +
      "<p>" + esc(S.cfg.intro || "Ready?") + "</p><h3>Press " + esc(label) + " or click to start</h3>", "count gate");
    const go = () => {
      if (S.begun) return;
      document.removeEventListener("keydown", onKey);
      S.field.removeEventListener("mousedown", go);
      overlay("");
      beginRound();
    };
    const onKey = (e) => { if (keyName(e) === key) { e.preventDefault(); go(); } };
    document.addEventListener("keydown", onKey);
    S.field.addEventListener("mousedown", go);
  }

  function timeline(ctx) {
    const banner = document.getElementById("banner");
    for (const line of ctx.timeline) {
      if (line.show && line.field) continue;  // a kind's own content (flash)
      if (line.show) {
        roundAt(line.t, () => {
          banner.textContent = line.show;
          banner.classList.add("shown");
        });
        if (line.until != null) {
          roundAt(line.until, () => {
            if (banner.textContent === line.show) { banner.textContent = ""; banner.classList.remove("shown"); }
          });
        }
      }
    }
  }

  /** Keys for a kind: the handler gets the key's name while the round is in play. */
  function onKeys(handler) {
    document.addEventListener("keydown", (e) => {
      const name = keyName(e);
      if (["Space", "ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Backspace"].includes(name)) e.preventDefault();
      if (!S.playing || !pending() || e.repeat) return;
      handler(name, e);
    });
  }

  /** The screen centre of an element, for window.game.plan. */
  function centre(node, fx = 0.5, fy = 0.5) {
    const r = node.getBoundingClientRect();
    return {x: Math.round(r.left + r.width * fx), y: Math.round(r.top + r.height * fy)};
  }

  function shuffled(list, rng) {
    const a = list.slice();
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  }

  /** The typed line under a game (flash, words): keys go to it wherever the focus is. */
  function typingLine(parent, placeholder) {
    const text = el("span.tl-text");
    const box = el("div.tl-box", {}, [el("span.tl-ph", {text: placeholder}), text, el("span.tl-caret")]);
    parent.append(box);
    const line = {
      box, value: "",
      set(v) { line.value = v; text.textContent = v; box.classList.toggle("filled", v.length > 0); },
      shake() { box.classList.remove("shake"); void box.offsetWidth; box.classList.add("shake"); },
    };
    return line;
  }

  const COLORS = {red: "#ef4444", blue: "#3b82f6", green: "#22c55e", yellow: "#facc15", purple: "#a855f7",
    orange: "#fb923c", pink: "#f472b6"};

  // ---- kind: whack --------------------------------------------------------------------------

  function whackKind() {
    const SEQUENCE = 600;  // spawns drawn up front; more than any round can use
    const HIT_SLACK = 8;   // px around a target that still count as a hit
    const k = {name: "whack", cells: [], seq: [], spawn: 0, target: null, rules: null};

    k.build = (field, ctx) => {
      const cfg = S.cfg;
      k.rules = {
        window_s: num(cfg.window_s, 2.5),
        gap_s: range(cfg.gap_s, [0.5, 1.0]),
        decoy_rate: num(cfg.decoy_rate, 0),
      };
      const rows = num(cfg.rows, 3), cols = num(cfg.cols, 3);
      const rect = field.getBoundingClientRect();
      const size = num(cfg.size, 110);
      field.style.setProperty("--size", size + "px");
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const cx = (c + 0.5) * rect.width / cols, cy = (r + 0.5) * rect.height / rows;
          const hole = el("div.gm-hole", {style: `left:${cx}px;top:${cy}px`}, [el("div.back"), el("div.pit"), el("div.front")]);
          field.append(hole);
          k.cells.push({cx, cy, hole});
        }
      }
      field.addEventListener("mousedown", onPress);
      // Every spawn's cell, pause and decoy draw, from the seed alone.
      let last = -1;
      for (let i = 0; i < SEQUENCE; i++) {
        let cell = Math.floor(ctx.rng() * (k.cells.length - (last >= 0 ? 1 : 0)));
        if (last >= 0 && cell >= last) cell += 1;  // never the same hole twice in a row
        k.seq.push({cell, gap: ctx.rng(), decoy: ctx.rng()});
        last = cell;
      }
    };

    k.begin = () => {
      for (const line of S.ctx.timeline) {
        const keys = ["window_s", "gap_s", "decoy_rate"].filter((key) => key in line);
        if (keys.length) roundAt(line.t, () => { for (const key of keys) k.rules[key] = line[key]; });
      }
    };

    k.play = () => spawnNext(0.4);
    k.stop = () => { if (k.target) retire(k.target, "down"); };

    function spawnNext(delay) {
      S.ctx.at(S.ctx.now() + delay, () => {
        if (S.over) return;
        const n = k.spawn++;
        const draw = k.seq[n % SEQUENCE];
        const decoy = draw.decoy < k.rules.decoy_rate;
        const cell = k.cells[draw.cell];
        const node = el("div.gm-target" + (decoy ? ".decoy" : ".mole"), {"data-cell": String(draw.cell), "data-n": String(n)},
          [decoy ? bomb() : mole()]);
        cell.hole.querySelector(".pit").append(node);
        const target = {n, decoy, cell, node, gone: false};
        k.target = target;
        S.ctx.at(S.ctx.now() + k.rules.window_s, () => {
          if (target.gone) return;
          retire(target, "down");
          spawnNext(pause(n));
        });
      });
    }

    function pause(n) {
      const [lo, hi] = k.rules.gap_s;
      return lo + (hi - lo) * k.seq[n % SEQUENCE].gap;
    }

    function retire(target, how) {
      target.gone = true;
      if (k.target === target) k.target = null;
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
      if (!S.playing || !pending()) return;
      const rect = S.field.getBoundingClientRect();
      const x = e.clientX - rect.left, y = e.clientY - rect.top;
      const size = num(S.cfg.size, 110);
      const t = k.target;
      const hit = t && !t.gone &&
        Math.abs(x - t.cell.cx) <= size / 2 + HIT_SLACK &&
        y >= t.cell.cy - size / 2 - HIT_SLACK && y <= t.cell.cy + size * 0.5 + HIT_SLACK;
      if (hit && !t.decoy) {
        retire(t, "bonk");
        burst(x, y, "+1");
        setScore(S.score + 1);
        if (S.score >= goal()) return win(S.score + " hits");
        spawnNext(pause(t.n));
        return;
      }
      if (hit && t.decoy) {
        retire(t, "boom");
        spawnNext(pause(t.n));
      }
      miss(x, y);
    }

    k.roundOver = () => {
      // The round's clock is the episode's: show it; the runtime answers "timeout".
      S.over = true;
      k.stop();
      overlay("<h2>Time's up!</h2><p>" + S.score + " hits</p>", "lose");
      if (roundLength() < S.ctx.episode.timeLimit) S.ctx.timeout();
    };
    k.plan = () => {
      const t = k.target && !k.target.gone && !k.target.decoy ? k.target : null;
      if (!t) return {wait: 0.1, x: null, y: null};
      const p = centre(t.node);
      return {wait: 0, x: p.x, y: p.y};
    };
    return k;
  }

  // ---- kind: reaction -----------------------------------------------------------------------

  function reactionKind() {
    const k = {name: "reaction", phase: "idle", attempt: 0, delays: [], goAt: null, token: 0, times: []};
    let pad, big, small, log;

    k.build = (field, ctx) => {
      const [lo, hi] = range(S.cfg.delay_s, [1.5, 4.0]);
      for (let i = 0; i < 300; i++) k.delays.push(lo + (hi - lo) * ctx.rng());
      big = el("div.rx-big", {text: "Reaction Test"});
      small = el("div.rx-small", {text: "When the panel turns green, click as fast as you can."});
      pad = el("div.rx-pad.idle", {}, [el("div.rx-icon", {html: clockSvg()}), big, small]);
      log = el("ol.rx-log");
      field.append(pad, el("div.rx-side", {}, [el("h3", {text: "Your times"}), log]));
      field.addEventListener("mousedown", onPress);
    };

    function clockSvg() {
      return '<svg viewBox="0 0 48 48"><circle cx="24" cy="26" r="17" fill="none" stroke="currentColor" stroke-width="4"/><path d="M24 26V16M19 4h10" stroke="currentColor" stroke-width="4" stroke-linecap="round"/></svg>';
    }

    function show(cls, title, sub) {
      pad.className = "rx-pad " + cls;
      big.textContent = title;
      small.textContent = sub || "";
    }

    /** A new attempt at round time `at`: red, then green after the attempt's seeded delay. */
    function arm(at) {
      const n = k.attempt++;
      const token = ++k.token;
      k.goAt = at + k.delays[n % k.delays.length];
      roundAt(at, () => {
        if (token !== k.token || S.over) return;
        k.phase = "wait";
        show("wait", "Wait for green\u2026", "Round " + (S.score + 1) + " of " + goal());
      });
      roundAt(k.goAt, () => {
        if (token !== k.token || S.over) return;
        k.phase = "go";
        k.wentAt = rnow();
        show("go", "CLICK!", "");
        roundAt(k.wentAt + num(S.cfg.window_s, 2.0), () => {
          if (token !== k.token || S.over || k.phase !== "go") return;
          k.phase = "result";
          show("slow", "Too slow!", "The next round starts in a moment.");
          arm(rnow() + 1.2);
        });
      });
    }

    k.play = () => arm(rnow());

    function onPress(e) {
      if (!S.playing || !pending()) return;
      const rect = S.field.getBoundingClientRect();
      const x = e.clientX - rect.left, y = e.clientY - rect.top;
      if (k.phase === "go") {
        const ms = Math.round((rnow() - k.wentAt) * 1000);
        k.token++;
        k.phase = "result";
        setScore(S.score + 1);
        log.append(el("li", {}, [el("span", {text: "Round " + S.score}), el("b", {text: ms + " ms"})]));
        show("hit", ms + " ms", S.score >= goal() ? "" : "Nice! Get ready for the next one.");
        burst(x, y, "+1");
        if (S.score >= goal()) return win(S.score + " rounds");
        arm(rnow() + 1.2);
      } else if (k.phase === "wait") {
        k.token++;
        k.phase = "result";
        show("early", "Too soon!", "Wait for green before you click.");
        miss(x, y, "too soon");
        if (!S.over) arm(rnow() + 1.2);
      }
    }

    k.plan = () => {
      const p = centre(pad);
      if (k.phase === "go") return {wait: 0, x: p.x, y: p.y};
      if (k.goAt === null) return {wait: clamp0(num(S.cfg.countdown_s, 3) + k.delays[0] - rnow() + 0.12), x: p.x, y: p.y};
      return {wait: clamp0(k.goAt - rnow() + 0.12), x: p.x, y: p.y};
    };
    return k;
  }

  // ---- kind: listen -------------------------------------------------------------------------

  function listenKind() {
    const k = {name: "listen", tiles: [], rounds: [], perms: [], active: null, checking: false};
    let board, status;

    k.build = (field, ctx) => {
      const colors = S.cfg.colors || ["red", "blue", "green"];
      const shapes = S.cfg.shapes || ["circle", "square", "star"];
      status = el("div.ls-status", {}, [el("span.ls-ear", {html: earSvg()}), el("span.ls-text", {text: "Listen for the call"})]);
      board = el("div.ls-board", {style: `grid-template-columns: repeat(${Math.max(colors.length, shapes.length)}, 1fr)`});
      for (const c of colors) {
        for (const s of shapes) {
          const label = c + " " + s;
          const tile = el("button.ls-tile", {"data-label": label, "aria-label": label, html: shapeSvg(s, COLORS[c] || c)});
          tile.addEventListener("mousedown", () => onTile(tile));
          k.tiles.push(tile);
        }
      }
      k.rounds = ctx.timeline.filter((l) => l.field);
      for (let r = 0; r <= k.rounds.length; r++) k.perms.push(shuffled(k.tiles, ctx.rng));
      board.append(...k.perms[0]);
      field.append(status, board);
      document.getElementById("gm-score").textContent = "0 / " + goal();
    };

    function setStatus(text, cls) {
      status.className = "ls-status" + (cls ? " " + cls : "");
      status.querySelector(".ls-text").textContent = text;
    }

    k.play = () => {
      k.rounds.forEach((line, r) => {
        roundAt(line.t, () => {
          board.append(...k.perms[r + 1]);  // reshuffle: append moves each tile to the end in turn
          for (const tile of k.tiles) tile.classList.remove("right");
          k.active = r;
          setStatus("Listen\u2026 then tap the tile", "live");
        });
        roundAt(line.t + num(S.cfg.window_s, 8), () => {
          if (k.active === r) timeUp("Too slow!", "The call went unanswered");
        });
      });
    };

    async function onTile(tile) {
      if (!S.playing || !pending() || k.active === null || k.checking) return;
      const r = k.active;
      k.checking = true;
      const ok = await S.ctx.grade(k.rounds[r].field, tile.dataset.label);
      k.checking = false;
      if (!ok) {
        tile.classList.add("wrong");
        return lose(S.cfg.wrong_failure || "wrong_tile", "Wrong tile!", "That was not the one called");
      }
      k.active = null;
      tile.classList.add("right");
      const c = centre(tile);
      const f = S.field.getBoundingClientRect();
      burst(c.x - f.left, c.y - f.top, "+1");
      setScore(S.score + 1);
      if (S.score >= goal()) return win(S.score + " of " + goal() + " calls");
      setStatus("Correct! Wait for the next call", "ok");
    }

    function earSvg() {
      return '<svg viewBox="0 0 24 24"><path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor"/><path d="M16 8a5 5 0 0 1 0 8M18.5 5.5a8.5 8.5 0 0 1 0 13" stroke="currentColor" stroke-width="1.8" fill="none"/></svg>';
    }

    k.plan = () => {
      const next = k.rounds[k.active === null ? S.score : k.active];
      return {wait: k.active !== null || !next ? 0 : clamp0(next.t - rnow())};
    };
    return k;
  }

  function shapeSvg(shape, color) {
    const paths = {
      circle: '<circle cx="50" cy="50" r="34"/>',
      square: '<rect x="18" y="18" width="64" height="64" rx="6"/>',
      triangle: '<path d="M50 14 L88 82 L12 82 Z"/>',
      star: '<path d="M50 10 L61 38 L91 39 L67 58 L76 88 L50 70 L24 88 L33 58 L9 39 L39 38 Z"/>',
      heart: '<path d="M50 86 C20 64 10 48 12 34 C14 18 34 12 50 30 C66 12 86 18 88 34 C90 48 80 64 50 86 Z"/>',
      diamond: '<path d="M50 8 L86 50 L50 92 L14 50 Z"/>',
    };
    return '<svg viewBox="0 0 100 100"><g fill="' + color + '" stroke="rgba(0,0,0,0.25)" stroke-width="3">' + (paths[shape] || paths.circle) + "</g></svg>";
  }

  // ---- kind: simon --------------------------------------------------------------------------

  function simonKind() {
    const k = {name: "simon", pads: [], seq: [], round: 0, idx: 0, phase: "idle", inputAt: null, token: 0};
    let hub, hubText;
    const lengths = () => S.cfg.lengths || [3, 4, 5];

    k.build = (field, ctx) => {
      const names = ["green", "red", "yellow", "blue"];
      const disc = el("div.sm-disc");
      names.forEach((name, i) => {
        const pad = el("div.sm-pad.q" + i, {"data-pad": String(i), "data-color": name});
        pad.addEventListener("mousedown", () => onPad(i));
        disc.append(pad);
        k.pads.push(pad);
      });
      hubText = el("div.sm-hub-text", {text: "Ready"});
      hub = el("div.sm-hub", {}, [el("div.sm-brand", {text: S.cfg.game || "Simon"}), hubText]);
      disc.append(hub);
      field.append(disc, el("div.sm-rounds", {id: "sm-rounds"}));
      const longest = Math.max(...lengths());
      for (let i = 0; i < longest; i++) k.seq.push(Math.floor(ctx.rng() * 4));
      document.getElementById("gm-score").textContent = "0 / " + lengths().length;
    };

    // The first round is scheduled when the round begins, so the plan knows it in the countdown.
    k.begin = (cd) => show(0, cd + 0.6);

    k.play = () => {};

    function light(i, seconds) {
      const pad = k.pads[i];
      pad.classList.add("lit");
      setTimeout(() => pad.classList.remove("lit"), seconds * 1000);
    }

    /** Show round r's steps from round time `at`, then take input. */
    function show(r, at) {
      const n = lengths()[r];
      const step = num(S.cfg.step_s, 0.8), lit = num(S.cfg.lit_s, 0.5);
      k.round = r;
      roundAt(at - 0.3, () => { k.phase = "show"; hubText.textContent = "Watch"; });
      for (let i = 0; i < n; i++) roundAt(at + i * step, () => light(k.seq[i], lit));
      k.inputAt = at + (n - 1) * step + lit + 0.15;
      roundAt(k.inputAt, () => {
        k.phase = "input";
        k.idx = 0;
        hubText.textContent = "Your turn";
        idle();
      });
    }

    function idle() {
      const token = ++k.token;
      roundAt(rnow() + num(S.cfg.input_s, 6), () => {
        if (token === k.token && k.phase === "input") timeUp("Too slow!", "Round " + (k.round + 1));
      });
    }

    function onPad(i) {
      if (!S.playing || !pending() || k.phase !== "input") return;
      light(i, 0.25);
      if (i !== k.seq[k.idx]) {
        k.phase = "over";
        return lose(S.cfg.wrong_failure || "wrong_sequence", "Wrong pad!", "Round " + (k.round + 1));
      }
      k.idx += 1;
      idle();
      if (k.idx < lengths()[k.round]) return;
      k.phase = "pause";
      k.token++;
      setScore(S.score + 1);
      hubText.textContent = "Nice!";
      if (k.round + 1 >= lengths().length) return win(S.score + " rounds");
      show(k.round + 1, rnow() + 1.4);
    }

    k.plan = () => {
      if (k.phase === "input") {
        const p = centre(k.pads[k.seq[k.idx]], [0.62, 0.38, 0.62, 0.38][k.seq[k.idx]], [0.62, 0.62, 0.38, 0.38][k.seq[k.idx]]);
        return {wait: 0, x: p.x, y: p.y};
      }
      return {wait: clamp0(k.inputAt - rnow() + 0.05), x: null, y: null};
    };
    return k;
  }

  // ---- kind: flash --------------------------------------------------------------------------

  function flashKind() {
    const k = {name: "flash", levels: [], active: null, phase: "idle", checking: false};
    let card, stageText, level, line;

    k.build = (field, ctx) => {
      k.levels = ctx.timeline.filter((l) => l.field && l.show);
      level = el("div.fl-level", {text: "Level 1 of " + k.levels.length});
      stageText = el("div.fl-prompt", {text: "Get ready to memorise"});
      const screen = el("div.fl-screen", {}, [stageText]);
      card = el("div.fl-card", {}, [level, screen]);
      line = typingLine(card, "Type the number, then press Enter");
      line.box.classList.add("off");
      field.append(card);
      k.screen = screen;
      onKeys(onKey);
    };

    k.play = () => {
      const answerS = num(S.cfg.answer_s, 8);
      k.levels.forEach((lv, i) => {
        roundAt(lv.t - 1.2, () => {
          if (k.phase === "answer") return;
          level.textContent = "Level " + (i + 1) + " of " + k.levels.length;
          stageText.textContent = "Watch closely\u2026";
        });
        roundAt(lv.t, () => {
          k.phase = "show";
          k.digits = el("div.fl-digits", {text: lv.show});
          stageText.textContent = "";
          k.screen.append(k.digits);
        });
        roundAt(lv.until, () => {
          if (k.digits) k.digits.remove();
          k.digits = null;
          k.phase = "answer";
          k.active = i;
          stageText.textContent = "What was the number?";
          line.set("");
          line.box.classList.remove("off");
        });
        roundAt(lv.until + answerS, () => {
          if (k.active === i) timeUp("Too slow!", "Level " + (i + 1));
        });
      });
    };
    k.stop = () => { if (k.digits) k.digits.remove(); k.digits = null; };

    async function onKey(name) {
      if (k.phase !== "answer" || k.checking) return;
      if (name === "Backspace") return line.set(line.value.slice(0, -1));
      if (name === "Enter") {
        if (!line.value.trim()) return;
        const i = k.active;
        k.checking = true;
        const ok = await S.ctx.grade(k.levels[i].field, line.value);
        k.checking = false;
        if (!ok) return lose(S.cfg.wrong_failure || "wrong_number", "Wrong number", "Level " + (i + 1));
        k.active = null;
        k.phase = "wait";
        line.box.classList.add("off");
        setScore(S.score + 1);
        stageText.textContent = "Correct!";
        if (S.score >= goal()) return win("All " + goal() + " levels");
        return;
      }
      if (name.length === 1 && /[0-9 \-]/.test(name) && line.value.length < 24) line.set(line.value + name);
    }

    k.plan = () => ({wait: k.phase === "answer" ? 0 : 0.1});
    return k;
  }

  // ---- kind: words --------------------------------------------------------------------------

  function wordsKind() {
    const k = {name: "words", seq: [], next: 0, live: [], landed: 0};
    let layer, line, landedNode;
    const fall = () => num(S.cfg.fall_s, 8);

    k.build = (field, ctx) => {
      const words = S.cfg.words || ["apple", "river", "stone"];
      const [lo, hi] = range(S.cfg.spawn_s, [1.8, 2.6]);
      const width = field.getBoundingClientRect().width;
      let order = [], t = 0.3;
      for (let i = 0; i < 200; i++) {
        if (!order.length) order = shuffled(words, ctx.rng);
        const text = order.pop();
        const x = 30 + (width - 200) * ctx.rng();
        k.seq.push({text, x, spawn: t});
        t += lo + (hi - lo) * ctx.rng();
      }
      layer = el("div.wd-layer");
      landedNode = el("span", {text: "0"});
      field.append(el("div.wd-sky"), el("div.wd-city"), layer,
        el("div.wd-landed", {}, [el("span", {text: "Landed "}), landedNode]));
      line = typingLine(field, "Type a falling word, then press Enter");
      line.box.classList.add("wd-input");
      onKeys(onKey);
    };

    k.play = (cd) => {
      k.base = cd;
      for (const w of k.seq) w.spawn += cd;
      S.ctx.every(0.03, tick);
    };
    k.stop = () => { for (const w of k.live) w.node.remove(); k.live = []; };

    function tick() {
      if (S.over) return;
      const now = rnow();
      while (k.next < k.seq.length && k.seq[k.next].spawn <= now) {
        const w = Object.assign({}, k.seq[k.next++]);
        w.land = w.spawn + fall();
        w.node = el("div.wd-word", {"data-word": w.text, text: w.text, style: `left:${w.x}px`});
        layer.append(w.node);
        k.live.push(w);
      }
      const height = S.field.clientHeight - 110;
      for (const w of k.live.slice()) {
        const p = (now - w.spawn) / fall();
        if (p >= 1) {
          w.node.remove();
          k.live.splice(k.live.indexOf(w), 1);
          k.landed += 1;
          landedNode.textContent = String(k.landed);
          burst(w.x + 40, height + 20, "splat", "miss");
          continue;
        }
        w.node.style.transform = `translateY(${Math.round(p * height)}px)`;
      }
    }

    function onKey(name) {
      if (name === "Backspace") return line.set(line.value.slice(0, -1));
      if (name === "Enter") {
        const typed = line.value.trim().toLowerCase();
        line.set("");
        if (!typed) return;
        const hits = k.live.filter((w) => w.text.toLowerCase() === typed).sort((a, b) => a.land - b.land);
        if (!hits.length) { line.shake(); return miss(); }
        const w = hits[0];
        w.node.remove();
        k.live.splice(k.live.indexOf(w), 1);
        const y = (rnow() - w.spawn) / fall() * (S.field.clientHeight - 110);
        burst(w.x + 40, y + 20, "+1");
        setScore(S.score + 1);
        if (S.score >= goal()) win(S.score + " words");
        return;
      }
      if (name.length === 1 && /[a-zA-Z\-']/.test(name) && line.value.length < 24) line.set(line.value + name.toLowerCase());
    }

    k.plan = () => {
      const now = rnow();
      const first = k.live.slice().sort((a, b) => a.land - b.land)[0];
      if (first) return {wait: 0, word: first.text};
      const upcoming = k.seq[k.next];
      return {wait: upcoming && S.playing ? clamp0(upcoming.spawn - now + 0.35) : 0.3, word: null};
    };
    return k;
  }

  // ---- kind: redlight -----------------------------------------------------------------------

  function redlightKind() {
    const k = {name: "redlight", calls: [], strides: 0, until: 0};
    let runner, track;

    k.build = (field, ctx) => {
      const grace = num(S.cfg.grace_s, 1.0);
      k.calls = ctx.timeline.filter((l) => l.light).map((l) => ({
        light: l.light, t: l.t, from: l.light === "green" ? l.t : clipEnd(l) + grace,
      }));
      runner = el("div.rl-runner", {}, [el("i.head"), el("i.body"), el("i.arm.l"), el("i.arm.r"), el("i.leg.l"), el("i.leg.r")]);
      const lanesN = 5;
      const others = [];
      for (let i = 0; i < lanesN; i++) if (i !== 2) others.push(el("div.rl-npc.n" + i, {style: `left:${10 + i * 20}%`}, [el("i.head"), el("i.body")]));
      track = el("div.rl-track", {}, [
        el("div.rl-finish", {}, [el("span", {text: "FINISH"})]),
        el("div.rl-caller", {}, [el("i.head"), el("i.body"), el("i.horn")]),
        el("div.rl-start", {}, [el("span", {text: "START"})]),
        ...others,
        runner,
      ]);
      const step = el("button.rl-step", {}, [el("span", {html: "&#9650;"}), el("b", {text: "Step"})]);
      step.addEventListener("mousedown", (e) => { e.preventDefault(); stride(); });
      field.append(track, step);
      const keys = S.cfg.keys || ["Space", "ArrowUp"];
      onKeys((name) => { if (keys.includes(name)) stride(); });
      place();
    };

    function place() {
      const p = k.strides / goal();
      runner.style.bottom = `calc(34px + ${p} * (100% - 130px))`;
    }

    /** Is a stride now caught? The round starts on red. */
    function red(t) {
      let state = "red";
      for (const c of k.calls) if (c.from <= t) state = c.light;
      return state === "red";
    }

    function stride() {
      if (!S.playing || !pending()) return;
      const now = rnow();
      if (now < k.until) return;  // still in the last stride
      if (red(now)) {
        runner.classList.add("caught");
        return lose(S.cfg.caught_failure || "caught", "Caught moving!", "You moved on a red light");
      }
      k.until = now + num(S.cfg.stride_s, 0);
      k.strides += 1;
      runner.classList.toggle("alt");
      place();
      setScore(k.strides);
      if (k.strides >= goal()) win("You crossed the finish line");
    }

    k.play = () => {};

    k.plan = () => {
      const now = rnow();
      const at = Math.max(now, k.until + 0.05);  // the first moment a press strides again
      // Safe: green already called, and the next red call (from now) not started by then.
      const nextRed = k.calls.find((c) => c.light === "red" && c.t > now - 0.01);
      const lastGreen = [...k.calls].reverse().find((c) => c.light === "green" && c.t <= at);
      const inGreen = S.playing && !red(at) && lastGreen && (!nextRed || nextRed.t - at > 0.25);
      if (inGreen) return {wait: clamp0(at - now), key: "Space"};
      const after = nextRed && nextRed.t - at <= 0.25 ? nextRed.t : now;
      const nextGreen = k.calls.find((c) => c.light === "green" && c.t > after);
      return {wait: nextGreen ? clamp0(Math.max(nextGreen.t + 0.4, at) - now) : 1, key: "Space"};
    };
    return k;
  }

  // ---- kind: catch --------------------------------------------------------------------------

  function catchKind() {
    const k = {name: "catch", lane: 0, fruit: [], next: 0, rules: []};
    let basket, layer;
    const lanes = () => num(S.cfg.lanes, 5);
    const fall = () => num(S.cfg.fall_s, 2.6);
    const LEAD = 0.5;  // seconds before a landing that the plan decides where to be

    k.build = (field, ctx) => {
      const colors = S.cfg.colors || ["red", "green", "yellow", "purple"];
      const [lo, hi] = range(S.cfg.spawn_s, [0.8, 1.1]);
      let t = 0.4;
      for (let i = 0; i < 300; i++) {
        k.fruit.push({i, lane: Math.floor(ctx.rng() * lanes()), color: colors[Math.floor(ctx.rng() * colors.length)], spawn: t, done: false});
        t += lo + (hi - lo) * ctx.rng();
      }
      const grace = num(S.cfg.grace_s, 0.5);
      k.rules = [{from: -1e9, rule: S.cfg.rule || "all"}].concat(
        ctx.timeline.filter((l) => l.rule).map((l) => ({from: clipEnd(l) + grace, rule: l.rule})));
      const w = field.getBoundingClientRect().width;
      k.laneW = w / lanes();
      for (let i = 1; i < lanes(); i++) field.append(el("div.ct-lane", {style: `left:${i * k.laneW}px`}));
      layer = el("div.ct-layer");
      basket = el("div.ct-basket", {}, [el("i.rim"), el("i.weave")]);
      field.append(el("div.ct-tree.l"), el("div.ct-tree.r"), layer, basket);
      k.lane = Math.floor(lanes() / 2);
      moveTo(k.lane);
      field.addEventListener("mousedown", (e) => {
        if (!S.playing || !pending()) return;
        const rect = field.getBoundingClientRect();
        moveTo(Math.max(0, Math.min(lanes() - 1, Math.floor((e.clientX - rect.left) / k.laneW))));
      });
      onKeys((name) => {
        if (name === "ArrowLeft") moveTo(Math.max(0, k.lane - 1));
        if (name === "ArrowRight") moveTo(Math.min(lanes() - 1, k.lane + 1));
      });
    };

    function moveTo(lane) {
      k.lane = lane;
      basket.style.left = (lane + 0.5) * k.laneW + "px";
    }

    function ruleAt(t) {
      let rule = "all";
      for (const r of k.rules) if (r.from <= t) rule = r.rule;
      return rule;
    }

    function good(color, rule) {
      if (rule === "all") return true;
      if (rule.startsWith("not ")) return color !== rule.slice(4);
      return color === rule;
    }

    k.play = (cd) => {
      for (const f of k.fruit) { f.spawn += cd; f.land = f.spawn + fall(); }
      S.ctx.every(0.025, tick);
    };
    k.stop = () => { for (const f of k.fruit) if (f.node) { f.node.remove(); f.node = null; } };

    function tick() {
      if (S.over) return;
      const now = rnow();
      const height = S.field.clientHeight;
      const catchY = height - 70;
      while (k.next < k.fruit.length && k.fruit[k.next].spawn <= now) {
        const f = k.fruit[k.next++];
        f.node = el("div.ct-fruit.c-" + f.color, {"data-lane": String(f.lane), "data-color": f.color,
          style: `left:${(f.lane + 0.5) * k.laneW}px; --c:${COLORS[f.color] || f.color}`}, [el("i.leaf"), el("i.shine")]);
        layer.append(f.node);
      }
      for (let i = Math.max(0, k.next - 12); i < k.next; i++) {
        const f = k.fruit[i];
        if (!f.node) continue;
        const p = (now - f.spawn) / fall();
        if (!f.done && p >= 1) {
          f.done = true;
          if (f.lane === k.lane) {
            f.node.remove();
            f.node = null;
            const x = (f.lane + 0.5) * k.laneW;
            if (good(f.color, ruleAt(f.land))) {
              burst(x, catchY - 30, "+1");
              setScore(S.score + 1);
              if (S.score >= goal()) return win(S.score + " fruit");
            } else {
              burst(x, catchY - 30, "wrong fruit!", "miss");
              basket.classList.remove("hurt"); void basket.offsetWidth; basket.classList.add("hurt");
              loseLife();
              if (S.over) return;
            }
            continue;
          }
        }
        const y = -30 + p * (catchY + 30);
        if (y > height + 40) { f.node.remove(); f.node = null; continue; }
        f.node.style.transform = `translate(-50%, ${Math.round(y)}px)`;
      }
    }

    k.plan = () => {
      const now = rnow();
      if (!S.playing) return {wait: clamp0(num(S.cfg.countdown_s, 3) - now + 0.05), lane: k.lane, x: null, y: null};
      const up = k.fruit.filter((f) => !f.done && f.land > now);
      const next = up.find((f) => f.land - LEAD > now + 0.02);
      const wait = next ? clamp0(next.land - LEAD - now) : 0.3;
      let lane = null;
      for (const g of up) {
        if (!good(g.color, ruleAt(g.land))) continue;
        const blocked = up.some((b) => b.lane === g.lane && b.land <= g.land && !good(b.color, ruleAt(b.land)));
        if (!blocked) { lane = g.lane; break; }
      }
      if (lane === null) {
        const danger = (l) => up.some((b) => b.lane === l && b.land < now + 1.5 && !good(b.color, ruleAt(b.land)));
        lane = danger(k.lane) ? [...Array(lanes()).keys()].find((l) => !danger(l)) : k.lane;
      }
      const f = S.field.getBoundingClientRect();
      return {wait, lane, x: Math.round(f.left + (lane + 0.5) * k.laneW), y: Math.round(f.top + f.height * 0.45)};
    };
    return k;
  }

  // ---- kind: drive --------------------------------------------------------------------------

  function driveKind() {
    const LANES = 3;
    const NAMES = ["left", "middle", "right"];
    const LEAD = 0.6;  // seconds before an impact that the plan decides where to be
    const k = {name: "drive", lane: 1, events: [], fogs: [], crashes: 0};
    let road, car, layer, fog;

    k.build = (field, ctx) => {
      const approach = num(S.cfg.approach_s, 2.2), lead = num(S.cfg.lead_s, 4.5);
      // Fog banks and their barriers, from the co-driver's calls.
      for (const line of ctx.timeline.filter((l) => l.open)) {
        const open = NAMES.indexOf(line.open);
        const at = line.t + lead;
        k.fogs.push({from: at - approach - 0.3, to: at + 0.7});  // the fog hides the barriers' approach
        k.events.push({at, lanes: [0, 1, 2].filter((l) => l !== open), kind: "barrier"});
      }
      // Traffic, one draw per slot whether used or not, so it depends on the seed only.
      const [lo, hi] = range(S.cfg.gap_s, [0.9, 1.5]);
      const end = roundLength();
      let t = num(S.cfg.countdown_s, 3) + 1.6;
      while (t < end - 1) {
        const lane = Math.floor(ctx.rng() * LANES), style = Math.floor(ctx.rng() * 4), gap = lo + (hi - lo) * ctx.rng();
        const clear = k.events.every((e) => Math.abs(e.at - t) > 1.3) &&
          k.fogs.every((f) => t < f.from - 0.2 || t - approach > f.to);
        if (clear) k.events.push({at: t, lanes: [lane], kind: "car", style});
        t += gap;
      }
      k.events.sort((a, b) => a.at - b.at);
      k.approach = approach;

      road = el("div.dr-road", {}, [el("div.dr-mark.m1"), el("div.dr-mark.m2"), el("div.dr-edge.l"), el("div.dr-edge.r")]);
      layer = el("div.dr-layer");
      fog = el("div.dr-fog");
      car = el("div.dr-player", {}, [el("i.roof"), el("i.glass"), el("i.lamp.l"), el("i.lamp.r")]);
      road.append(layer, car, fog);
      field.append(el("div.dr-verge.l"), el("div.dr-verge.r"), road,
        el("div.dr-route", {}, [el("span", {text: "Route"}), el("div.dr-bar", {}, [el("i", {id: "dr-progress"})])]));
      place();
      field.addEventListener("mousedown", (e) => {
        if (!S.playing || !pending()) return;
        const r = road.getBoundingClientRect();
        const lane = Math.floor((e.clientX - r.left) / (r.width / LANES));
        k.lane = Math.max(0, Math.min(LANES - 1, lane));
        place();
      });
      onKeys((name) => {
        if (name === "ArrowLeft") { k.lane = Math.max(0, k.lane - 1); place(); }
        if (name === "ArrowRight") { k.lane = Math.min(LANES - 1, k.lane + 1); place(); }
      });
      document.getElementById("gm-score").textContent = "0.0 km";
    };

    function place() {
      car.style.left = ((k.lane + 0.5) / LANES * 100) + "%";
    }

    k.play = () => {
      road.classList.add("moving");
      S.ctx.every(0.025, tick);
    };
    k.stop = () => {
      road.classList.remove("moving");
      for (const e of k.events) if (e.nodes) { e.nodes.forEach((n) => n.remove()); e.nodes = null; }
    };

    function tick() {
      if (S.over) return;
      const now = rnow();
      const h = road.clientHeight;
      const carY = h - 80;
      const speed = (carY + 70) / k.approach;  // px per second
      const fogLine = carY - num(S.cfg.reveal_s, 0.5) * speed;
      const inFog = k.fogs.some((f) => now >= f.from && now <= f.to);
      fog.classList.toggle("on", inFog);
      fog.style.height = Math.max(0, fogLine) + "px";
      const total = roundLength() - num(S.cfg.countdown_s, 3);
      const done = Math.max(0, Math.min(1, (now - num(S.cfg.countdown_s, 3)) / total));
      document.getElementById("dr-progress").style.width = (done * 100) + "%";
      document.getElementById("gm-score").textContent = (done * num(S.cfg.route_km, 4)).toFixed(1) + " km";
      for (const e of k.events) {
        const y = carY - (e.at - now) * speed;
        const visible = e.kind === "barrier" ? y >= fogLine : y >= -70;
        if (!e.resolved && now >= e.at) {
          e.resolved = true;
          if (e.lanes.includes(k.lane)) {
            k.crashes += 1;
            car.classList.remove("hurt"); void car.offsetWidth; car.classList.add("hurt");
            const r = road.getBoundingClientRect(), f = S.field.getBoundingClientRect();
            burst(r.left - f.left + (k.lane + 0.5) * r.width / LANES, carY - 30, "crash!", "miss");
            loseLife();
            if (S.over) return;
          }
        }
        if (visible && y < h + 80 && !e.nodes) {
          e.nodes = e.lanes.map((l) => {
            const node = e.kind === "car"
              ? el("div.dr-car.s" + e.style, {"data-lane": String(l)}, [el("i.roof"), el("i.glass")])
              : el("div.dr-barrier", {"data-lane": String(l)}, [el("i.stripe")]);
            node.style.left = ((l + 0.5) / LANES * 100) + "%";
            layer.append(node);
            return node;
          });
        }
        if (e.nodes && (y >= h + 80 || !visible)) { e.nodes.forEach((n) => n.remove()); e.nodes = null; }
        if (e.nodes) for (const n of e.nodes) n.style.top = Math.round(y) + "px";
      }
    }

    k.roundOver = () => win("You reached the finish");

    k.plan = () => {
      const now = rnow();
      if (!S.playing) return {wait: clamp0(num(S.cfg.countdown_s, 3) - now + 0.05), lane: k.lane, x: null, y: null};
      const up = k.events.filter((e) => e.at > now);
      const next = up.find((e) => e.at - LEAD > now + 0.02);
      const wait = next ? clamp0(next.at - LEAD - now) : 0.5;
      let lane = k.lane;
      const first = up[0];
      if (first && first.lanes.includes(lane)) {
        const free = [0, 1, 2].filter((l) => !first.lanes.includes(l));
        const after = up[1] && up[1].at - first.at < 1.6 ? up[1] : null;
        const better = free.filter((l) => !after || !after.lanes.includes(l));
        const pool = better.length ? better : free;
        lane = pool.sort((a, b) => Math.abs(a - k.lane) - Math.abs(b - k.lane))[0];
      }
      const r = road.getBoundingClientRect();
      return {wait, lane, x: Math.round(r.left + (lane + 0.5) * r.width / LANES), y: Math.round(r.top + r.height * 0.55)};
    };
    return k;
  }

  // ---- kind: rhythm -------------------------------------------------------------------------

  function rhythmKind() {
    const KEYS = ["ArrowLeft", "ArrowDown", "ArrowUp", "ArrowRight"];
    const MIRROR = [3, 2, 1, 0];
    const k = {name: "rhythm", notes: [], mirrors: [], next: 0, hits: 0};
    let layer, receptors = [];
    const fall = () => num(S.cfg.fall_s, 1.8);
    const win_s = () => num(S.cfg.window_s, 0.22);

    k.build = (field, ctx) => {
      const beat = num(S.cfg.beat_s, 0.9), beats = num(S.cfg.beats, 36);
      const rest = num(S.cfg.rest_rate, 0.15);
      const first = num(S.cfg.countdown_s, 3) + fall() + 0.2;
      const calls = ctx.timeline.filter((l) => "mirror" in l);
      k.mirrors = calls.map((l) => ({from: clipEnd(l), on: Boolean(l.mirror), t: l.t}));
      let last = -1;
      for (let b = 0; b < beats; b++) {
        const at = first + b * beat;
        const lane = Math.floor(ctx.rng() * 4), skip = ctx.rng() < rest;
        const duringCall = k.mirrors.some((m) => at > m.t - 0.3 && at < m.from + 0.6);
        if (skip || duringCall) continue;
        k.notes.push({at, lane: lane === last ? (lane + 1 + Math.floor(b % 3)) % 4 : lane});
        last = k.notes[k.notes.length - 1].lane;
      }
      k.songEnd = first + beats * beat + 0.6;
      const lanes = el("div.rh-lanes");
      for (let i = 0; i < 4; i++) lanes.append(el("div.rh-lane.l" + i));
      const line = el("div.rh-line");
      for (let i = 0; i < 4; i++) {
        const r = el("div.rh-receptor.l" + i, {html: arrowSvg(i)});
        receptors.push(r);
        line.append(r);
      }
      layer = el("div.rh-layer");
      field.append(el("div.rh-lights"), lanes, line, layer, el("div.rh-judge", {id: "rh-judge"}));
      onKeys(onKey);
    };

    function arrowSvg(i) {
      const rot = [0, 270, 90, 180][i];
      return '<svg viewBox="0 0 64 64" style="transform:rotate(' + rot + 'deg)"><path d="M8 32 L30 10 L30 23 L56 23 L56 41 L30 41 L30 54 Z"/></svg>';
    }

    function mirrorAt(t) {
      let on = false;
      for (const m of k.mirrors) if (m.from <= t) on = m.on;
      return on;
    }

    function expected(note) {
      return KEYS[mirrorAt(note.at) ? MIRROR[note.lane] : note.lane];
    }

    function judge(text, cls) {
      const j = document.getElementById("rh-judge");
      j.className = "rh-judge " + (cls || "");
      j.textContent = text;
      void j.offsetWidth;
      j.classList.add("pop");
    }

    k.play = () => {
      S.ctx.every(0.02, tick);
      roundAt(k.songEnd, () => { if (!S.over) timeUp("Song over", S.score + " hits"); });
    };
    k.stop = () => { for (const n of k.notes) if (n.node) { n.node.remove(); n.node = null; } };

    function lanesGeom() {
      const w = S.field.clientWidth, laneW = 110, left = (w - laneW * 4) / 2;
      return {laneW, left, lineY: S.field.clientHeight - 110};
    }

    function tick() {
      if (S.over) return;
      const now = rnow();
      const g = lanesGeom();
      for (const n of k.notes) {
        const dt = n.at - now;
        if (dt > fall()) break;
        if (!n.done && dt < -win_s()) { n.done = true; n.missed = true; if (n.node) n.node.classList.add("gone"); }
        if (n.done && !n.node) continue;
        const y = g.lineY - dt / fall() * (g.lineY + 60);
        if (!n.node && !n.done) {
          n.node = el("div.rh-note.l" + n.lane, {"data-lane": String(n.lane), html: arrowSvg(n.lane)});
          n.node.style.left = (g.left + (n.lane + 0.5) * g.laneW) + "px";
          layer.append(n.node);
        }
        if (n.node && (y > S.field.clientHeight + 40 || (n.done && !n.missed))) { n.node.remove(); n.node = null; continue; }
        if (n.node) n.node.style.transform = `translate(-50%, ${Math.round(y - 32)}px)`;
      }
    }

    function onKey(name) {
      const i = KEYS.indexOf(name);
      if (i < 0) return;
      const now = rnow();
      receptors[i].classList.remove("press"); void receptors[i].offsetWidth; receptors[i].classList.add("press");
      const cand = k.notes.filter((n) => !n.done && Math.abs(n.at - now) <= win_s())
        .sort((a, b) => Math.abs(a.at - now) - Math.abs(b.at - now))[0];
      if (!cand) { judge("Miss", "bad"); return miss(); }
      cand.done = true;
      if (name !== expected(cand)) {
        cand.missed = true;
        if (cand.node) cand.node.classList.add("gone");
        judge("Wrong arrow", "bad");
        return miss();
      }
      if (cand.node) { cand.node.remove(); cand.node = null; }
      judge(Math.abs(cand.at - now) < 0.08 ? "Perfect!" : "Good", "good");
      setScore(S.score + 1);
      if (S.score >= goal()) win(S.score + " hits");
    }

    k.plan = () => {
      const now = rnow();
      const n = k.notes.find((x) => !x.done && x.at > now - win_s() * 0.5);
      if (!n) return {wait: 0.3, key: null};
      return {wait: clamp0(n.at - now - 0.14), key: expected(n)};
    };
    return k;
  }

  // ---- the page -----------------------------------------------------------------------------

  const KINDS = {
    whack: whackKind, reaction: reactionKind, listen: listenKind, simon: simonKind, flash: flashKind,
    words: wordsKind, redlight: redlightKind, catch: catchKind, drive: driveKind, rhythm: rhythmKind,
  };

  DynaCU.task({
    autoplayAudio: false,  // clips play from the round's start (see start_key)
    setup(ctx) {
      S.ctx = ctx;
      const name = ctx.config.kind || "whack";
      if (!KINDS[name]) throw new Error("unknown game kind " + name);
      S.kind = KINDS[name]();
      build(ctx);
      const kind = S.kind;
      window.game = {
        kind: name,
        get phase() { return kind.phase || (S.over ? "over" : S.playing ? "play" : S.begun ? "countdown" : "ready"); },
        get score() { return S.score; },
        get lives() { return S.lives; },
        get misses() { return S.misses; },
        get plan() { return kind.plan ? kind.plan() : null; },
        state: kind,
      };
    },
    start(ctx) {
      if (S.cfg.start_key) startGate();
      else beginRound();
    },
  });
})();
