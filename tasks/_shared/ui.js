/* ui.js: the helpers the apps share, as DynaCU.ui (load it after dynacu-task.js).
 *
 *   const {el, clock, initials} = DynaCU.ui;
 *
 *   el(spec, props, ...children)  a new element. spec is "tag" or "tag.class.class" (the tag
 *       defaults to div). props (optional):
 *         class   more class names ("a b"); text: its text (String of any value but null,
 *         undefined and false); html: its markup (the app's own static markup only, never config text);
 *         style   a cssText string, or an object of properties; attrs: an object of attributes,
 *         set as given; on: an object of event listeners;
 *         any other key: an attribute, or the property of that name where the element has one
 *         and the value is not a string (checked, value of a number, a listener); null,
 *         undefined and false leave it out, true sets it empty.
 *       children: nodes or strings, or arrays of them; null, undefined, false and "" are left
 *       out (so `cond && node` and `cond ? node : null` work), and so is 0.
 *   icons(paths)  a function (name, size = 24) -> the SVG markup of the icon named in `paths`
 *       (24x24 path markup each, drawn in currentColor).
 *   initials(name, none = "?")  the first letters of the first two of the name's words that
 *       begin with a letter, capitalised; `none` where no word does ("+1 555 0100").
 *   clock(seconds, {pad, up})  "m:ss", or "h:mm:ss" from an hour: pad = true gives "mm:ss";
 *       up = true rounds up (a countdown shows 0:01 until it is over).
 *   barChart(bars, {max, grid, values, tone})  a bar chart's plot: bars [{label, value, text}]
 *       scaled to max (default the largest value), grid lines at 25% steps from 100% down to
 *       grid * 25% (default 1), each bar's text (or value) above it unless values = false,
 *       and tone = true gives a bar with `tone` the class tone-<tone>.
 *   Track  the position in a recording that runs only while playing, and the clips on it
 *       (see the class).
 */
(function () {
  "use strict";

  function el(spec, props, ...children) {
    const [tag, ...classes] = String(spec).split(".");
    const node = document.createElement(tag || "div");
    const p = props || {};
    if (p.class) classes.push(p.class);
    if (classes.length) node.className = classes.join(" ");
    for (const [key, value] of Object.entries(p)) {
      if (key === "class") continue;
      if (key === "text") {
        if (value !== undefined && value !== null && value !== false) node.textContent = String(value);
      } else if (key === "html") {
        if (value !== undefined && value !== null && value !== false) node.innerHTML = value;
      } else if (key === "style") {
        if (typeof value === "string") node.style.cssText = value;
        else for (const [k, v] of Object.entries(value || {})) node.style.setProperty(k, v);
      } else if (key === "attrs") {
        for (const [k, v] of Object.entries(value || {})) node.setAttribute(k, v);
      } else if (key === "on") {
        for (const [k, v] of Object.entries(value || {})) node.addEventListener(k, v);
      } else if (value === undefined || value === null || value === false) {
        continue;
      } else if (key in node && typeof value !== "string") {
        node[key] = value;
      } else {
        node.setAttribute(key, value === true ? "" : value);
      }
    }
    for (const child of children.flat(Infinity)) if (child) node.append(child);
    return node;
  }

  function icons(paths) {
    return (name, size = 24) =>
      `<svg viewBox="0 0 24 24" width="${size}" height="${size}" fill="currentColor" aria-hidden="true">${paths[name]}</svg>`;
  }

  function initials(name, none = "?") {
    const words = String(name || "").split(/\s+/).filter((w) => /^\p{L}/u.test(w));
    return words.slice(0, 2).map((w) => w[0].toUpperCase()).join("") || none;
  }

  function clock(seconds, {pad = false, up = false} = {}) {
    const s = Math.max(0, up ? Math.ceil(seconds) : Math.floor(seconds + 1e-6));
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
    const mm = h || pad ? String(m).padStart(2, "0") : String(m);
    return (h ? h + ":" : "") + mm + ":" + String(r).padStart(2, "0");
  }

  function barChart(bars, {max, grid = 1, values = true, tone = false} = {}) {
    const top = max || Math.max(1, ...bars.map((b) => Number(b.value) || 0));
    const plot = el("div", {class: "chart-plot"});
    for (let g = 4; g >= grid; g--) plot.append(el("div", {class: "grid-line", style: {bottom: (g * 25) + "%"}}));
    const cols = el("div", {class: "chart-cols"});
    for (const b of bars) {
      const height = Math.round((Number(b.value) || 0) / top * 100) + "%";
      const bar = el("div", {class: "bar" + (tone && b.tone ? " tone-" + b.tone : ""), style: {height}});
      const label = b.text !== undefined ? b.text : b.value;
      cols.append(el("div", {class: "chart-col"},
        el("div", {class: "bar-wrap"}, values === false ? null : el("span", {class: "bar-val", text: label}), bar),
        el("span", {class: "bar-label", text: b.label || ""})));
    }
    plot.append(cols);
    return plot;
  }

  /**
   * The position in a recording (a podcast episode, a voicemail), which runs only while
   * playing, and the clips scheduled on it: clips [{index, at, duration}], `at` in the
   * recording's seconds, played through ctx.playClip. A live recording's position is the
   * episode clock (it runs on while paused, and playing resumes at the live edge, mid-line).
   * Pausing a recording mid-line rewinds to the start of the line, so that resuming replays
   * it whole (the runtime cannot start a clip part-way).
   */
  class Track {
    constructor(ctx, clips, length, live) {
      this.ctx = ctx;
      this.clips = clips;
      this.length = length;
      this.live = Boolean(live);
      this.pos = 0;          // position when last anchored (seconds)
      this.anchor = 0;       // ctx.now() at that moment
      this.playing = false;
      this.started = false;  // played at least once
    }

    position() {
      if (this.live) return Math.min(this.ctx.now(), this.length);
      const p = this.playing ? this.pos + (this.ctx.now() - this.anchor) : this.pos;
      return Math.min(p, this.length);
    }

    /** Start of the clip playing at p, or p itself between clips. */
    lineStart(p) {
      const clip = this.clips.find((c) => c.at < p && p < c.at + c.duration);
      return clip ? clip.at : p;
    }

    play() {
      if (this.playing) return;
      if (this.live) this.pos = this.position();  // back at the live edge
      else if (this.pos >= this.length - 0.05) this.pos = 0;  // at the end: play from the start
      this.anchor = this.ctx.now();
      this.playing = true;
      this.started = true;
      for (const c of this.clips) {
        let src = null;
        if (c.at >= this.pos - 1e-3) src = this.ctx.playClip(c.index, c.at - this.pos);
        else if (this.live && c.at + c.duration > this.pos + 0.05) src = this.ctx.playClip(c.index, 0, this.pos - c.at);
        // The runtime resumes its AudioContext only when it autoplays; do it here.
        if (src && src.context.state === "suspended") src.context.resume();
      }
    }

    pause() {
      if (!this.playing) return;
      this.pos = this.live ? this.position() : this.lineStart(this.position());
      this.playing = false;
      this.ctx.stopAudio();
    }

    seek(p) {
      if (this.live) return;
      const wasPlaying = this.playing;
      if (wasPlaying) { this.playing = false; this.ctx.stopAudio(); }
      this.pos = this.lineStart(Math.max(0, Math.min(p, this.length)));
      if (wasPlaying) this.play();
    }

    /** Called on every tick: stop at the end of the recording. */
    update() {
      if (this.playing && this.position() >= this.length) {
        this.playing = false;
        this.pos = this.length;
      }
    }
  }

  window.DynaCU.ui = {el, icons, initials, clock, barChart, Track};
})();
