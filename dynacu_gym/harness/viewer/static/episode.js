/* dynacu view: one episode on its time axis.
 *
 * A step view is observation i (what the agent saw at its time: the screenshot, the keyframes
 * since the step before, the record text) and the action the agent chose from it (action i+1,
 * drawn on the screenshot, with the agent's reply). The speaker capture plays in sync: choosing
 * a step moves the audio to the step's time, and playing moves the chosen step along.
 */
(function () {
  "use strict";
  const {el, svg, secs} = DynaCUView;
  const data = DynaCUView.data();
  const app = document.getElementById("app");
  const steps = data.steps;
  const line = data.line || {};

  // ---- what an action is, in words and on the screen -------------------------------------------
  // A wait's seconds to the hundredth: the oracle waits until a scripted time (28.798882... s).
  function seconds(s) { return typeof s === "number" ? String(+s.toFixed(2)) : String(s); }

  function actionText(a) {
    if (!a) return "(none: the episode ends here)";
    const note = a.narration ? `  # ${a.narration}` : "";
    switch (a.type) {
      case "click": return (a.element ? `click [${a.element}]` : `click ${a.x} ${a.y}`) + note;
      case "type": return `type ${JSON.stringify(a.text)}` + note;
      case "speak": return `speak ${JSON.stringify(a.text)}` + note;
      case "key": return `key ${a.key}` + note;
      case "scroll": return `scroll ${a.direction} ${a.amount ?? ""}`.trim() + note;
      case "wait": return `wait ${seconds(a.seconds)}` + note;
      case "done": return "done" + note;
      default: return JSON.stringify(a);
    }
  }
  function elementBox(record, n) {
    if (!record) return null;
    const re = new RegExp(`^\\s*\\[${n}\\] .* at (\\d+),(\\d+) \\(box (\\d+),(\\d+) (\\d+)x(\\d+)\\)`, "m");
    const m = re.exec(record);
    return m ? m.slice(1).map(Number) : null;
  }
  function overlay(step, next, width, height) {
    const a = next && next.action;
    const layer = svg("svg", {viewBox: `0 0 ${width} ${height}`, "aria-label": "the action"});
    if (!a) return layer;
    const label = (text, x, y) => {
      const w = Math.min(width - 20, 14 + 12.5 * text.length);
      const left = Math.max(10, Math.min(x, width - w - 10));
      const top = Math.max(10, Math.min(y, height - 44));
      return svg("g", {class: "overlay-label"},
        svg("rect", {x: left, y: top, width: w, height: 34, rx: 6}),
        svg("text", {x: left + 8, y: top + 24, text: text}));
    };
    let x = a.x, y = a.y;
    if (a.type === "click" && a.element) {
      const box = elementBox(step.record, a.element);
      if (box) {
        [x, y] = box;
        layer.append(svg("rect", {class: "overlay-mark", x: box[2], y: box[3], width: box[4], height: box[5], rx: 3}));
      }
    }
    if (a.type === "click" && x !== undefined && y !== undefined) {
      layer.append(svg("circle", {class: "overlay-mark", cx: x, cy: y, r: 22}),
        svg("circle", {class: "overlay-dot", cx: x, cy: y, r: 5}),
        label(actionText({...a, narration: ""}), x + 28, y - 17));
    } else if (a.type === "scroll") {
      const down = a.direction !== "up";
      const cx = width - 60, y0 = height / 2 + (down ? -60 : 60), y1 = height / 2 + (down ? 60 : -60);
      layer.append(svg("line", {class: "overlay-mark", x1: cx, y1: y0, x2: cx, y2: y1}),
        svg("path", {class: "overlay-dot", d: `M${cx - 16} ${y1 + (down ? -18 : 18)} L${cx} ${y1} L${cx + 16} ${y1 + (down ? -18 : 18)} Z`}),
        label(actionText({...a, narration: ""}), cx - 260, y1 + (down ? 14 : -48)));
    } else {
      layer.append(label(actionText({...a, narration: ""}).slice(0, 90), 20, height - 54));
    }
    return layer;
  }

  // ---- the time axis -------------------------------------------------------------------------------
  const audio = data.audio ? el("audio", {controls: "", preload: "metadata", src: data.audio, "aria-label": "the speaker"}) : null;
  // The agent's voice plays along with the speaker: it follows the speaker's play, pause and seek.
  const voice = data.voice ? el("audio", {preload: "auto", src: data.voice}) : null;
  const voiceOn = voice ? el("input", {type: "checkbox", checked: "", "aria-label": "the agent's voice"}) : null;
  if (audio && voice) {
    const follow = () => {
      if (Math.abs(voice.currentTime - audio.currentTime) > 0.15) voice.currentTime = audio.currentTime;
    };
    audio.addEventListener("play", () => { follow(); if (voiceOn.checked) voice.play(); });
    audio.addEventListener("pause", () => voice.pause());
    audio.addEventListener("seeked", follow);
    voiceOn.addEventListener("change", () => { if (!voiceOn.checked) voice.pause(); else if (!audio.paused) { follow(); voice.play(); } });
  }
  const lastT = steps.length ? steps[steps.length - 1].elapsed : 0;
  const ends = [lastT, ...data.page_said.map((s) => s.end), ...data.agent_said.map((s) => s.end),
    ...data.transcript.map((s) => s.end), data.task.duration_s || 0];
  let total = Math.max(1, ...ends.filter((t) => typeof t === "number"));
  const W = 1400, LEFT = 96, RIGHT = 12;
  const LANES = [
    ["steps", "steps"], ["keyframes", "keyframes"], ["page script", "page-said"],
    ["transcript", "transcript"], ["agent said", "agent-said"], ["verdict", "verdict"],
  ];
  const LANE_H = 22, TOP = 8, AXIS_H = 22;
  const H = TOP + LANES.length * LANE_H + AXIS_H;
  const xOf = (t) => LEFT + (W - LEFT - RIGHT) * Math.max(0, Math.min(1, t / total));
  const axis = svg("svg", {viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "time axis"});
  const laneY = (k) => TOP + k * LANE_H;
  const stepMarks = [];
  function drawAxis() {
    axis.replaceChildren();
    LANES.forEach(([name], k) => axis.append(svg("text", {class: "lane-label", x: 6, y: laneY(k) + 15, text: name}),
      svg("line", {x1: LEFT, x2: W - RIGHT, y1: laneY(k) + LANE_H - 1, y2: laneY(k) + LANE_H - 1, stroke: "#eef0f3"})));
    const every = [1, 2, 5, 10, 15, 30, 60, 120, 300].find((s) => total / s <= 14) || 600;
    for (let t = 0; t <= total + 1e-9; t += every) {
      axis.append(svg("text", {class: "tick", x: xOf(t), y: H - 6, "text-anchor": "middle", text: `${t}s`}),
        svg("line", {x1: xOf(t), x2: xOf(t), y1: TOP, y2: H - AXIS_H + 2, stroke: "#f0f2f5"}));
    }
    const bar = (k, cls, s, title) => svg("rect", {class: cls, x: xOf(s.start), y: laneY(k) + 4,
      width: Math.max(2, xOf(s.end) - xOf(s.start)), height: LANE_H - 8, rx: 3}, svg("title", {text: title}));
    stepMarks.length = 0;
    steps.forEach((s, i) => {
      const mark = svg("rect", {class: "step", x: xOf(s.elapsed) - 2, y: laneY(0) + 3, width: 4, height: LANE_H - 6,
        "data-step": i}, svg("title", {text: `step ${s.step} at ${secs(s.elapsed)}: ${actionText(s.action)}`}));
      stepMarks.push(mark);
      axis.append(mark);
      for (const kf of s.keyframes) {
        axis.append(svg("circle", {class: "kf", cx: xOf(kf.t), cy: laneY(1) + LANE_H / 2, r: 3.5},
          svg("title", {text: `keyframe at ${secs(kf.t)} (returned at step ${s.step})`})));
      }
    });
    for (const s of data.page_said) axis.append(bar(2, "page-said", s, `${secs(s.start)} ${s.who ? s.who + ": " : ""}${s.text}`));
    for (const s of data.transcript) axis.append(bar(3, "transcript", s, `${secs(s.start)} heard: ${s.text}`));
    for (const s of data.agent_said) axis.append(bar(4, "agent-said", s, `${secs(s.start)} the agent said: ${s.text}`));
    if (line.result !== undefined) {
      const ok = line.success === true;
      axis.append(svg("circle", {class: `verdict ${ok ? "ok" : "fail"}`, cx: xOf(lastT), cy: laneY(5) + LANE_H / 2, r: 6},
        svg("title", {text: `${line.result} at ${secs(lastT)}`})));
    }
    axis.append(cursor);
  }
  const cursor = svg("line", {class: "cursor", x1: LEFT, x2: LEFT, y1: TOP, y2: H - AXIS_H + 2});
  function moveCursor(t) {
    cursor.setAttribute("x1", xOf(t));
    cursor.setAttribute("x2", xOf(t));
  }
  axis.addEventListener("click", (event) => {
    const box = axis.getBoundingClientRect();
    const x = ((event.clientX - box.left) / box.width) * W;
    const t = ((x - LEFT) / (W - LEFT - RIGHT)) * total;
    select(stepAt(t), {seek: true, at: Math.max(0, t)});
  });
  function stepAt(t) {
    let k = 0;
    for (let i = 0; i < steps.length; i++) if (steps[i].elapsed <= t + 1e-6) k = i;
    return k;
  }

  // ---- the step view -------------------------------------------------------------------------------
  const shot = el("div", {class: "shot"});
  const side = el("div", {class: "side card"});
  const keyframes = el("div", {class: "keyframes"});
  const record = el("pre", {class: "record-text"});
  const where = el("span", {class: "where"});
  const prev = el("button", {type: "button", text: "\u2190 previous", onclick: () => select(current - 1, {seek: true})});
  const next = el("button", {type: "button", text: "next \u2192", onclick: () => select(current + 1, {seek: true})});
  const playFrom = el("button", {type: "button", text: "\u25B6 play from this step", onclick: () => {
    if (!audio) return;
    audio.currentTime = steps[current] ? steps[current].elapsed : 0;
    audio.play();
  }});
  if (!audio) playFrom.disabled = true;
  const transcriptList = el("ol", {class: "transcript-list"});
  let current = -1;

  function field(name, value) {
    return value === undefined || value === null || value === "" ? [] : [el("dt", {text: name}), el("dd", {}, value)];
  }
  function select(i, options) {
    if (!steps.length) return;
    i = Math.max(0, Math.min(steps.length - 1, i));
    const opts = options || {};
    const changed = i !== current;
    current = i;
    const step = steps[i], following = steps[i + 1];
    if (changed) {
      shot.replaceChildren();
      if (step.screen) {
        const img = el("img", {src: step.screen, alt: `screen at step ${step.step}`, loading: "lazy"});
        img.addEventListener("load", () => {
          shot.querySelector("svg")?.remove();
          shot.append(overlay(step, following, img.naturalWidth, img.naturalHeight));
        });
        shot.append(img);
      } else {
        shot.append(el("div", {class: "none", text: "No screenshot saved for this step."}));
      }
      const agent = following ? following.agent || {} : {};
      side.replaceChildren(el("dl", {},
        field("observation", `step ${step.step} at ${secs(step.elapsed)}`),
        field("then did", actionText(following && following.action)),
        field("at", following ? `${secs(following.elapsed)} (when it finished)` : ""),
        field("error", following && following.last_action_error),
        field("page result", (following || step).task_result),
        field("said", following && following.speech ? `${following.speech.text} (${secs(following.speech.starts_at)} to ${secs(following.speech.ends_at)})` : ""),
        field("infra", (following || step).infra_error),
        field("Whisper calls", following && following.asr_calls),
        field("timings", following && following.timings ? Object.entries(following.timings).map(([k, v]) => `${k} ${(1000 * v).toFixed(0)} ms`).join(", ") : ""),
        field("agent", Object.keys(agent).filter((k) => k !== "reply").length ? JSON.stringify(Object.fromEntries(Object.entries(agent).filter(([k]) => k !== "reply"))) : ""),
      ), agent.reply ? [el("h2", {text: "The agent's reply"}), el("pre", {class: "reply", text: agent.reply})] : "");
      keyframes.replaceChildren(...(step.keyframes.length ? step.keyframes.map((kf, k) => el("figure", {},
        el("img", {src: kf.src, alt: `keyframe ${k + 1}`, loading: "lazy"}),
        el("figcaption", {text: `keyframe ${k + 1} at ${secs(kf.t)}`}))) : [el("p", {class: "muted", text: "No keyframes in this observation."})]));
      record.textContent = step.record === null ? "(no record saved for this step)" : step.record;
      stepMarks.forEach((m, k) => m.setAttribute("class", k === i ? "step current" : "step"));
      prev.disabled = i === 0;
      next.disabled = i === steps.length - 1;
      where.textContent = `step ${step.step} of ${steps[steps.length - 1].step} - ${secs(step.elapsed)}`;
      if (!opts.fromAudio) history.replaceState(null, "", `#step-${step.step}`);
    }
    const t = opts.at !== undefined ? opts.at : step.elapsed;
    if (opts.seek && audio) audio.currentTime = Math.max(0, t);
    moveCursor(opts.fromAudio ? opts.at : t);
    for (const li of transcriptList.children) li.classList.toggle("now", Number(li.dataset.start) <= t && t <= Number(li.dataset.end) + 0.5);
  }
  if (audio) {
    audio.addEventListener("timeupdate", () => {
      if (!audio.paused || audio.seeking === false) {
        if (!audio.paused) select(stepAt(audio.currentTime), {fromAudio: true, at: audio.currentTime});
      }
    });
    audio.addEventListener("loadedmetadata", () => {
      if (Number.isFinite(audio.duration) && audio.duration > total) { total = audio.duration; drawAxis(); select(current, {}); }
    });
  }
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement || event.altKey || event.ctrlKey || event.metaKey) return;
    const keys = {ArrowRight: 1, ArrowDown: 1, j: 1, ArrowLeft: -1, ArrowUp: -1, k: -1};
    if (event.key in keys) { select(current + keys[event.key], {seek: true}); event.preventDefault(); }
    else if (event.key === "Home") { select(0, {seek: true}); event.preventDefault(); }
    else if (event.key === "End") { select(steps.length - 1, {seek: true}); event.preventDefault(); }
    else if (event.key === " " && audio && event.target === document.body) {
      if (audio.paused) audio.play(); else audio.pause();
      event.preventDefault();
    }
  });

  // ---- the page -----------------------------------------------------------------------------------
  const ok = line.success === true, infra = !!line.infra_error;
  const badge = line.result === undefined ? el("span", {class: "badge none", text: "unfinished"})
    : el("span", {class: `badge ${infra ? "infra" : ok ? "ok" : "fail"}`, text: infra ? "infra error" : line.result});
  const facts = [["mode", line.mode], ["agent", line.agent], ["model", line.model], ["repeat", line.repeat],
    ["steps", line.steps], ["time", line.wall_s !== undefined ? secs(line.wall_s) : undefined],
    ["credit", line.credit], ["seed", line.seed], ["variant", line.variant || undefined]]
    .filter(([, v]) => v !== undefined && v !== null && v !== "");
  for (const [k, s] of data.transcript.entries()) {
    transcriptList.append(el("li", {"data-start": s.start, "data-end": s.end},
      el("span", {class: "muted", text: `${secs(s.start)} `}), s.text, s.stable ? "" : el("span", {class: "muted", text: " (unstable)"})));
    void k;
  }
  const spoken = data.spoken_answers || [];
  app.replaceChildren(...[
    el("p", {}, el("a", {href: "../index.html", text: "\u2190 every episode"})),
    el("div", {class: "head"}, el("h1", {text: `${data.task.id}${data.task.title ? " - " + data.task.title : ""}`}), badge),
    el("div", {class: "facts muted"}, facts.map(([k, v]) => el("span", {}, `${k} `, el("b", {text: String(v)})))),
    data.task.instruction ? el("p", {class: "instruction", text: data.task.instruction}) : "",
    line.infra_error ? el("ul", {class: "problems"}, el("li", {text: `infra error: ${line.infra_error}`})) : "",
    data.problems.length ? el("ul", {class: "problems"}, data.problems.map((p) => el("li", {text: p}))) : "",
    el("div", {class: "axis"}, axis),
    el("div", {class: "legend muted"}, [["steps", "var(--accent)"], ["keyframes", "var(--key)"], ["page script (its own times)", "var(--page)"],
      ["transcript", "var(--heard)"], ["agent said", "var(--agent)"]].map(([n, c]) => el("span", {}, el("i", {style: `background:${c}`}), n)),
      el("span", {}, el("kbd", {text: "\u2190"}), " ", el("kbd", {text: "\u2192"}), " steps, ", el("kbd", {text: "space"}), " play")),
    el("div", {class: "controls"}, prev, next, playFrom, audio || el("span", {class: "muted", text: "no sound to play"}),
      voice && audio ? el("label", {}, voiceOn, " with the agent's voice") : "", voice, where),
    steps.length ? el("div", {class: "stepview"}, shot, side) : el("p", {class: "muted", text: "No steps to show."}),
    steps.length ? [el("h2", {text: "Keyframes in this observation"}), keyframes,
      el("h2", {text: "The observation record"}), el("div", {class: "record"}, record)] : "",
    data.video ? [el("h2", {text: "The episode as a video"}),
      el("video", {controls: "", preload: "none", src: data.video, class: "episode-video"})] : "",
    el("div", {class: "lists"},
      el("div", {class: "card"}, el("h2", {text: "The transcript channel heard"}),
        data.transcript.length ? transcriptList : el("p", {class: "muted", text: "Nothing (a mode without the transcript, or a silent page)."})),
      el("div", {class: "card"}, el("h2", {text: "The page's script says"}),
        data.page_said.length ? el("ol", {}, data.page_said.map((s) => el("li", {}, el("span", {class: "muted", text: `${secs(s.start)} ${s.who || ""} `}), s.text)))
          : el("p", {class: "muted", text: "No spoken lines."})),
      el("div", {class: "card"}, el("h2", {text: "The agent said, the page heard"}),
        data.agent_said.length ? el("ol", {}, data.agent_said.map((s) => el("li", {}, el("span", {class: "muted", text: `${secs(s.start)} `}), s.text))) : el("p", {class: "muted", text: "The agent said nothing."}),
        data.heard.length ? [el("p", {class: "muted", text: "The page's recogniser heard:"}), el("ol", {}, data.heard.map((h) => el("li", {text: h})))] : "",
        spoken.length ? [el("p", {class: "muted", text: "Spoken answers:"}), el("ul", {}, spoken.map((s) =>
          el("li", {text: `${s.field}: said "${s.said}" (${s.said_verdict}), heard "${s.heard ?? ""}" (${s.heard_verdict}) - ${s.received ? "received" : "not received"}`})))] : ""),
      data.errors.length ? el("div", {class: "card"}, el("h2", {text: "Errors"}), el("ul", {}, data.errors.map((e) => el("li", {text: typeof e === "string" ? e : JSON.stringify(e)})))) : "",
    ),
  ].flat().filter((child) => child !== ""));
  drawAxis();
  const fromHash = /^#step-(\d+)$/.exec(location.hash);
  const start = fromHash ? steps.findIndex((s) => s.step === Number(fromHash[1])) : 0;
  select(start >= 0 ? start : 0, {});
  window.dynacuView = {select: (i) => select(i, {seek: true}), get current() { return current; }, audio, voice};
})();
