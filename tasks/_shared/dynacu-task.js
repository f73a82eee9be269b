/* dynacu-task.js: the page runtime every task page runs on.
 *
 * A page declares itself with
 *
 *   DynaCU.task({
 *     setup(ctx) { ... },   // build the page from ctx.episode / ctx.config; may return a Promise
 *     start(ctx) { ... },   // t = 0: the episode starts (timers, animations, audio)
 *   });
 *
 * and decides the outcome with ctx.succeed(), ctx.fail("name") or ctx.checkAnswer(field, text).
 * A task with a checklist (partial credit) has the page mark each criterion as the agent meets it:
 * ctx.grade(field, text) and ctx.gradeSpoken(field, text) judge the agent's answer and mark the
 * field's criterion (checkAnswer grades), ctx.check(name, held) marks any other; success needs
 * every criterion held. ctx.matches and ctx.mentions judge without marking (the page's own
 * lookups).
 *
 * The env's side of the contract:
 *   - window.DynaCU.ready    true once the episode data, the audio and setup() are done
 *   - window.DynaCU.error    a string if the page could not get ready
 *   - window.DynaCU.start()  starts the episode clock (called by the env after ready)
 *   - window.getTaskResult() "pending", the task's success value, "timeout" or a named failure;
 *                            read from the DOM (<html data-dynacu-result>), final once set
 *   - window.getTaskChecklist()  {criterion: held} in the task's order, or null without a
 *                            checklist; read from the DOM (<html data-dynacu-checklist>),
 *                            frozen with the verdict
 *   - window.DynaCU.verdicts the page's verdicts of spoken answers, in the order reached: a copy
 *                            of [{field, text, verdict, at}], verdict "accepted", "rejected" or
 *                            null, at = ctx.now(). Privileged state, never on the page: the env
 *                            reads it at the end of an episode to tell what the agent said from
 *                            what the page heard.
 *
 * Spoken answers: a verdict is one of heard speech when ctx.mentions (or ctx.gradeSpoken, which
 * calls it) is called while ctx.listen() hands the page an utterance, i.e. in the synchronous
 * part of onUtterance, before its first await. Every app judges there (its first await is the
 * judging call); a callback that awaits something else first goes unlogged. The same calls on
 * typed text (docs' retyped lines) or from a test (DynaCU.mentions) are not spoken answers.
 *
 * Answers: the page never holds them. The server hands out salted SHA-256 hashes of the
 * normalised accepted answers; checkAnswer() normalises the agent's text the same way (this file
 * mirrors dynacu_gym/answers.py; tasks/_shared/normalize-cases.json keeps the two in step),
 * hashes it with the salt and compares.
 *
 * Randomness: ctx.rng() is a PRNG seeded by the env's seed; pages use nothing else.
 */
(function () {
  "use strict";

  // ---- seeded randomness (mulberry32) -------------------------------------------------------
  function makeRng(seed) {
    let a = (seed >>> 0) || 0x9e3779b9;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  // ---- answer normalisation (mirror of dynacu_gym/answers.py) -------------------------------
  const UNITS = {zero: 0, oh: 0, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7,
    eight: 8, nine: 9, ten: 10, eleven: 11, twelve: 12, thirteen: 13, fourteen: 14,
    fifteen: 15, sixteen: 16, seventeen: 17, eighteen: 18, nineteen: 19};
  const TENS = {twenty: 20, thirty: 30, forty: 40, fifty: 50, sixty: 60, seventy: 70,
    eighty: 80, ninety: 90};
  const SCALES = {thousand: 3, million: 6, billion: 9, trillion: 12};
  const SUFFIXES = {k: 3, thousand: 3, m: 6, mn: 6, mil: 6, million: 6, b: 9, bn: 9,
    billion: 9, t: 12, trillion: 12};
  const MONTHS = {january: 1, jan: 1, february: 2, feb: 2, march: 3, mar: 3, april: 4, apr: 4,
    may: 5, june: 6, jun: 6, july: 7, jul: 7, august: 8, aug: 8, september: 9, sep: 9,
    sept: 9, october: 10, oct: 10, november: 11, nov: 11, december: 12, dec: 12};
  const ORDINALS = {first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7,
    eighth: 8, ninth: 9, tenth: 10, eleventh: 11, twelfth: 12, thirteenth: 13,
    fourteenth: 14, fifteenth: 15, sixteenth: 16, seventeenth: 17, eighteenth: 18,
    nineteenth: 19, twentieth: 20, thirtieth: 30};
  // Mirror of _NUMBER_NOISE in answers.py: currency and units after a number.
  const NUMBER_NOISE = new RegExp(
    "(?<![a-z])(dollars?|usd|euros?|eur|pounds?|gbp|per ?cent|percent|pct|ms|milliseconds?|secs?" +
    "|seconds?|mins?|minutes?|hours?|hrs?|kg|kilograms?|lbs?|km|kilometers?|kilometres?|miles?" +
    "|kb|mb|gb|tb|rps|req/s|requests per second)(?![a-z])|[$€£¥%]", "g");
  const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  const has = (obj, key) => Object.prototype.hasOwnProperty.call(obj, key);

  function base(raw) {
    let s = String(raw).normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
    s = s.replace(/[\u2018\u2019\u02bc]/g, "'").replace(/[\u201c\u201d]/g, '"');
    s = s.replace(/[\u2010-\u2015\u2212]/g, "-");
    return s.replace(/\s+/g, " ").trim();
  }

  function canonicalDecimal(sign, intPart, fracPart, power) {
    let digits = (intPart || "0") + fracPart;
    const point = (intPart || "0").length + power;
    if (point > digits.length) digits += "0".repeat(point - digits.length);
    let intS = digits.slice(0, point).replace(/^0+/, "") || "0";
    const fracS = digits.slice(point).replace(/0+$/, "");
    const value = intS + (fracS ? "." + fracS : "");
    return sign === "-" && value !== "0" ? "-" + value : value;
  }

  // A word that fits the number so far adds to it; one that cannot starts a said digit group
  // that follows it. The examples and the rule: _words_to_number in answers.py.
  function wordsToNumber(tokens) {
    let total = 0, current = 0, seen = false, frac = "", last = "";
    for (let i = 0; i < tokens.length; i++) {
      const tok = tokens[i];
      if (tok === "and") continue;
      if (tok === "point") {
        const rest = tokens.slice(i + 1);
        if (!rest.length || rest.some((t) => !has(UNITS, t) || UNITS[t] > 9)) return null;
        frac = rest.map((t) => String(UNITS[t])).join("");
        break;
      }
      if (has(UNITS, tok) || has(TENS, tok)) {
        const value = has(UNITS, tok) ? UNITS[tok] : TENS[tok];
        let kind = value < 10 ? "unit" : value < 20 ? "teen" : "tens";
        const fits = kind === "unit"
          ? ["", "tens", "hundred"].includes(last) && (value > 0 || !seen)
          : ["", "hundred"].includes(last);
        if (fits) {
          current += value;
          if (last === "tens") kind = "tens+unit";
        } else {
          current = current * (kind === "unit" ? 10 : 100) + value;
        }
        last = kind;
      } else if (tok === "hundred") {
        current = Math.max(current, 1) * 100;
        last = "hundred";
      } else if (has(SCALES, tok)) {
        total += Math.max(current, 1) * Math.pow(10, SCALES[tok]);
        current = 0;
        last = "";
      } else if (/^\d+$/.test(tok) && !seen) {
        current = parseInt(tok, 10);
        last = "";
      } else return null;
      seen = true;
    }
    if (!seen) return null;
    return [total + current, frac];
  }

  function normNumber(text) {
    text = text.replace(/^[\s"']+|[\s"'.!?;:]+$/g, "");
    text = text.replace(NUMBER_NOISE, " ");
    text = text.replace(/\s+/g, " ").trim();
    const m = /^([+-]?) ?(\d{1,3}(?:,\d{3})+|\d*)(?:\.(\d+))? ?([a-z]+)?$/.exec(text);
    if (m && (m[2] || m[3])) {
      const suffix = m[4];
      if (suffix !== undefined && !has(SUFFIXES, suffix)) return null;
      const power = suffix ? SUFFIXES[suffix] : 0;
      return canonicalDecimal(m[1], m[2].replace(/,/g, ""), m[3] || "", power);
    }
    let sign = "";
    if (text.startsWith("minus ") || text.startsWith("negative ")) {
      sign = "-";
      text = text.slice(text.indexOf(" ") + 1);
    }
    const tokens = text.split(/[ ,\-]+/).filter((t) => t); // "five, eight, two": digits
    let power = 0;
    if (tokens.length > 1 && has(SCALES, tokens[tokens.length - 1]) && tokens.includes("point")) {
      power = SCALES[tokens.pop()];
    }
    const parsed = wordsToNumber(tokens);
    if (parsed === null) return null;
    return canonicalDecimal(sign, String(parsed[0]), parsed[1], power);
  }

  function dayNumber(token) {
    const m = /^(\d{1,2})(st|nd|rd|th)?$/.exec(token);
    if (m) return parseInt(m[1], 10);
    const parts = token.split("-");
    if (parts.length === 2 && (parts[0] === "twenty" || parts[0] === "thirty") && has(ORDINALS, parts[1])) {
      return TENS[parts[0]] + ORDINALS[parts[1]];
    }
    return has(ORDINALS, token) ? ORDINALS[token] : null;
  }

  function normDate(text) {
    text = text.replace(/[,.]/g, " ");
    const tokens = text.split(" ").filter((t) => t && t !== "the" && t !== "of" && t !== "on");
    let month = null, day = null;
    if (tokens.length === 1 && /^\d{1,4}[/-]\d{1,2}(?:[/-]\d{1,4})?$/.test(tokens[0])) {
      const parts = tokens[0].split(/[/-]/);
      if (parts[0].length === 4) {
        if (parts.length !== 3) return null;
        month = parseInt(parts[1], 10); day = parseInt(parts[2], 10);
      } else {
        month = parseInt(parts[0], 10); day = parseInt(parts[1], 10);
      }
    } else {
      const joined = [];  // "twenty" + "eighth" as one token; a recogniser writes "20 second"
      for (const tok of tokens) {
        const prev = joined[joined.length - 1];
        const last = prev === "20" ? "twenty" : prev === "30" ? "thirty" : prev;
        if ((last === "twenty" || last === "thirty") && has(ORDINALS, tok)) joined[joined.length - 1] = last + "-" + tok;
        else joined.push(tok);
      }
      if (joined.length !== 2 && joined.length !== 3) return null;
      if (joined.length === 3 && !/^\d{4}$/.test(joined[2])) return null;
      if (has(MONTHS, joined[0])) { month = MONTHS[joined[0]]; day = dayNumber(joined[1]); }
      else if (has(MONTHS, joined[1])) { month = MONTHS[joined[1]]; day = dayNumber(joined[0]); }
      else return null;
    }
    if (month === null || day === null || month < 1 || month > 12) return null;
    if (day < 1 || day > DAYS_IN_MONTH[month - 1]) return null;
    return String(month).padStart(2, "0") + "-" + String(day).padStart(2, "0");
  }

  // A time said in words, written as digits; mirrors _spoken_time in answers.py.
  const MERIDIEM = /\s*\b(?:(a|p)\.? ?m\b\.?|in the (morning)|in the (afternoon|evening)|at (night))$/;
  function spokenTime(text) {
    let meridiem = "";
    const m = MERIDIEM.exec(text);
    if (m) {
      meridiem = m[1] === "a" || m[2] ? "am" : "pm";
      text = text.slice(0, m.index);
    }
    const tokens = text.trim().split(/[ \-]+/).filter((t) => t);
    const unit = (t) => (has(UNITS, t) ? UNITS[t] : 0);
    if (tokens.length === 3 && ["half", "quarter"].includes(tokens[0]) && ["past", "to"].includes(tokens[1])) {
      const hour = unit(tokens[2]);
      if (!(hour >= 1 && hour <= 12)) return null;
      if (tokens[1] === "past") return hour + ":" + (tokens[0] === "half" ? "30" : "15") + meridiem;
      return (hour === 1 ? 12 : hour - 1) + ":45" + meridiem;
    }
    if (!tokens.length || !(unit(tokens[0]) >= 1 && unit(tokens[0]) <= 12)) return null;
    const hour = unit(tokens[0]);
    const rest = tokens.slice(1);
    if (!rest.length || (rest.length === 1 && (rest[0] === "o'clock" || rest[0] === "oclock"))) {
      return rest.length || meridiem ? hour + ":00" + meridiem : null;
    }
    if (rest.length === 2 && (rest[0] === "oh" || rest[0] === "o") && has(UNITS, rest[1]) && UNITS[rest[1]] >= 1 && UNITS[rest[1]] <= 9) {
      return hour + ":0" + UNITS[rest[1]] + meridiem;
    }
    const parsed = rest.every((t) => has(UNITS, t) || has(TENS, t)) ? wordsToNumber(rest) : null;
    if (!parsed || parsed[1] || !(parsed[0] >= 10 && parsed[0] <= 59)) return null;
    return hour + ":" + parsed[0] + meridiem;
  }

  function normTime(text) {
    text = spokenTime(text) || text;
    text = text.replace(/\./g, ":").replace(/ /g, "").replace("o'clock", "").replace("oclock", "");
    const m = /^(\d{1,2})(?::(\d{2}))?(am|pm|a:m:|p:m:)?$/.exec(text);
    if (!m) return null;
    let hour = parseInt(m[1], 10);
    const minute = parseInt(m[2] || "0", 10);
    const meridiem = (m[3] || "").replace(/:/g, "");
    if (meridiem && m[2] === undefined && !(hour >= 1 && hour <= 12)) return null;
    if (!meridiem && m[2] === undefined) return null;
    if (meridiem) {
      if (!(hour >= 1 && hour <= 12)) return null;
      hour = (hour % 12) + (meridiem === "pm" ? 12 : 0);
    }
    if (hour > 23 || minute > 59) return null;
    return String(hour).padStart(2, "0") + ":" + String(minute).padStart(2, "0");
  }

  function normDigits(text) {
    const out = text.split(/[ \-]+/).map((t) => (has(UNITS, t) && UNITS[t] <= 9 ? String(UNITS[t]) : t.replace(/\D/g, ""))).join("");
    return out || null;
  }

  const KINDS = ["text", "number", "date", "time", "code", "digits"];

  function normalize(kind, raw) {
    if (!KINDS.includes(kind)) throw new Error("unknown answer kind " + kind);
    let text = base(raw);
    if (kind === "text") {
      text = text.replace(/[^\p{L}\p{N}]/gu, " ").replace(/\s+/g, " ").trim();
      text = text.replace(/^(the|a|an) /, "");
      return text || null;
    }
    if (kind === "code") {
      text = text.replace(/[^a-z0-9]/g, "").toUpperCase();
      return text || null;
    }
    if (kind === "number") return normNumber(text);
    if (kind === "date") return normDate(text);
    if (kind === "time") return normTime(text);
    return normDigits(text);
  }

  /**
   * The answers of `kind` that `text` says: its runs of 1-8 words, normalised (a Set). For
   * dates, a run inside a longer run that reads as another date is part of that date: "20
   * second of September" says the 22nd, not also the 2nd. As answers.readings.
   */
  function readings(kind, text, maxWords = 8) {
    const words = String(text).split(/\s+/).filter((w) => w);
    const found = [];
    for (let n = 1; n <= Math.min(maxWords, words.length); n++) {
      for (let i = 0; i + n <= words.length; i++) {
        const value = normalize(kind, words.slice(i, i + n).join(" "));
        if (value !== null) found.push({i, n, value});
      }
    }
    if (kind !== "date") return new Set(found.map((f) => f.value));
    const inside = (a, b) => b.n > a.n && b.i <= a.i && a.i + a.n <= b.i + b.n && b.value !== a.value;
    return new Set(found.filter((a) => !found.some((b) => inside(a, b))).map((a) => a.value));
  }

  /** Float32 blocks -> a 16-bit mono WAV Blob. */
  function encodeWav(blocks, rate) {
    const n = blocks.reduce((a, b) => a + b.length, 0);
    const buffer = new ArrayBuffer(44 + n * 2);
    const v = new DataView(buffer);
    const str = (o, s) => { for (let i = 0; i < s.length; i++) v.setUint8(o + i, s.charCodeAt(i)); };
    str(0, "RIFF"); v.setUint32(4, 36 + n * 2, true); str(8, "WAVE"); str(12, "fmt ");
    v.setUint32(16, 16, true); v.setUint16(20, 1, true); v.setUint16(22, 1, true);
    v.setUint32(24, rate, true); v.setUint32(28, rate * 2, true); v.setUint16(32, 2, true);
    v.setUint16(34, 16, true); str(36, "data"); v.setUint32(40, n * 2, true);
    let o = 44;
    for (const b of blocks) {
      for (let i = 0; i < b.length; i++, o += 2) {
        const x = Math.max(-1, Math.min(1, b[i]));
        v.setInt16(o, x < 0 ? x * 0x8000 : x * 0x7fff, true);
      }
    }
    return new Blob([buffer], {type: "audio/wav"});
  }

  async function sha256Hex(text) {
    const data = new TextEncoder().encode(text);
    const digest = await crypto.subtle.digest("SHA-256", data);
    return Array.from(new Uint8Array(digest)).map((b) => b.toString(16).padStart(2, "0")).join("");
  }

  // ---- the runtime ----------------------------------------------------------------------------
  const root = document.documentElement;
  const state = {
    definition: null,
    episode: null,
    t0: null,
    audioContext: null,
    buffers: [],
    sources: [],
    timers: [],
    checks: {},  // the checklist: criterion -> held
    hearing: 0,  // > 0 while listen() hands an utterance to the page's onUtterance
    verdicts: [],  // the verdicts of heard speech: {field, text, verdict, at}
  };

  function now() {
    return state.t0 === null ? 0 : (performance.now() - state.t0) / 1000;
  }

  function result() {
    return root.dataset.dynacuResult || "pending";
  }

  function finish(value) {
    if (result() !== "pending") return false;  // the first verdict is final
    if (value === state.episode.success) {
      const unmet = Object.keys(state.checks).filter((name) => !state.checks[name]);
      if (unmet.length) throw new Error("success with criteria not met: " + unmet.join(", "));
    }
    root.dataset.dynacuResult = value;
    return true;
  }

  const ctx = {
    get episode() { return state.episode; },
    get config() { return state.episode ? state.episode.config : {}; },
    /** Script lines with `show` or extra keys, in time order (the loader sorts the script). */
    get timeline() { return state.episode ? state.episode.timeline : []; },
    get audioClips() { return state.episode ? state.episode.audio : []; },
    rng: null,
    now,
    /** Whether the episode clock runs (DynaCU.start() was called). */
    get started() { return state.t0 !== null; },
    /** Run fn at t seconds after the start (immediately if that is past). */
    at(t, fn) {
      const delay = Math.max(0, t - now()) * 1000;
      state.timers.push(setTimeout(() => { if (result() === "pending") fn(); }, delay));
    },
    /** Run fn every `seconds` while the episode is pending. */
    every(seconds, fn) {
      state.timers.push(setInterval(() => { if (result() === "pending") fn(); }, seconds * 1000));
    },
    /**
     * Play clip i (decoded at load) after `delay` seconds, from `offset` seconds into the clip
     * (to resume a paused clip); returns the source node.
     */
    playClip(i, delay = 0, offset = 0) {
      const ac = state.audioContext;
      const src = ac.createBufferSource();
      src.buffer = state.buffers[i];
      src.connect(ac.destination);
      src.start(ac.currentTime + Math.max(0, delay), Math.max(0, offset));
      state.sources.push(src);
      return src;
    },
    /** Stop every clip that is playing or scheduled. */
    stopAudio() {
      for (const src of state.sources) { try { src.stop(); } catch (e) { /* not started */ } }
      state.sources = [];
    },
    /** Does `text` match an accepted answer for `field`? (normalised, salted hash compare) */
    async matches(field, text) {
      const spec = state.episode.answers[field];
      if (!spec) throw new Error("no answer field " + field);
      const norm = normalize(spec.kind, text);
      if (norm === null) return false;
      const hash = await sha256Hex(state.episode.salt + ":" + field + ":" + norm);
      return spec.hashes.includes(hash);
    },
    /**
     * Does a spoken utterance mention the answer? Its readings (runs of 1-8 words, normalised)
     * are compared, so "I think it's the third of May." finds that date. Returns
     * "accepted", "rejected" (a declared near miss is mentioned: hedging counts as wrong) or
     * null (neither). Called while an utterance is handed over (see listen()), the verdict is
     * logged as one of heard speech (DynaCU.verdicts).
     */
    async mentions(field, text) {
      const heard = state.hearing > 0;  // read before the first await: the handover is synchronous
      const spec = state.episode.answers[field];
      if (!spec) throw new Error("no answer field " + field);
      let accepted = false, rejected = false;
      for (const norm of readings(spec.kind, text)) {
        const hash = await sha256Hex(state.episode.salt + ":" + field + ":" + norm);
        if (spec.hashes.includes(hash)) accepted = true;
        if ((spec.near || []).includes(hash)) rejected = true;
      }
      const verdict = rejected ? "rejected" : accepted ? "accepted" : null;
      if (heard) state.verdicts.push({field, text: String(text), verdict, at: now()});
      return verdict;
    },
    /** The agent's answer `text` for `field`: does it match? Marks the field's criterion. */
    async grade(field, text) {
      const ok = await ctx.matches(field, text);
      ctx.check(field, ok);
      return ok;
    },
    /** The agent's spoken answer: ctx.mentions' verdict; marks the field held if "accepted". */
    async gradeSpoken(field, text) {
      const verdict = await ctx.mentions(field, text);
      ctx.check(field, verdict === "accepted");
      return verdict;
    },
    /** Grade the answer and decide the episode: success or the named failure. */
    async checkAnswer(field, text, failure = "wrong_answer") {
      const ok = await ctx.grade(field, text);
      finish(ok ? state.episode.success : failure);
      return ok;
    },
    /**
     * Mark a criterion of the task's checklist as held (or no longer held) while the episode is
     * pending. Apps mark every answer field they judge; a name the task's checklist does not
     * have is ignored (returns false).
     */
    check(name, held = true) {
      if (!(name in state.checks) || result() !== "pending") return false;
      state.checks[name] = Boolean(held);
      root.dataset.dynacuChecklist = JSON.stringify(state.checks);
      return true;
    },
    /**
     * Listen on the microphone as a call platform does: detect each utterance by its energy,
     * send it to the task server for speech recognition, and call onUtterance(text, info).
     * Returns {stop(), level()}. Options: threshold (RMS), silenceMs (end of an utterance),
     * maxMs (longest utterance), preRollMs (audio kept from before the onset). Judge the text
     * with ctx.gradeSpoken (or ctx.mentions) before any other await in onUtterance: the
     * verdicts reached while the utterance is handed over are the log of spoken answers.
     *
     * The audio comes as the capture's own frames (a MediaStreamTrackProcessor), queued until
     * the page reads them: a busy or starved page reads late but loses nothing, and times are
     * the capture's. Web Audio runs the microphone on its own real-time clock: with two other
     * envs running, an AudioWorklet lost up to a tenth of a tone and a ScriptProcessor more,
     * and Whisper heard "The driver is David." as "The driver is dated."
     */
    async listen(onUtterance, options = {}) {
      const opts = Object.assign({threshold: 0.01, silenceMs: 900, maxMs: 20000, preRollMs: 400, minMs: 250}, options);
      const stream = await navigator.mediaDevices.getUserMedia({audio: true});
      const [track] = stream.getAudioTracks();
      // Up to 30 s of 10 ms frames wait for a busy page.
      const reader = new MediaStreamTrackProcessor({track, maxBufferSize: 3000}).readable.getReader();
      const preRoll = [];           // recent blocks before an utterance starts
      let current = null;           // blocks of the utterance in progress
      let rate = 0, lastVoice = 0, started = 0, startedAt = 0, level = 0, stopped = false;
      let offset = Infinity;        // performance.now() less the capture clock (ms): the least seen
      // onsets: performance.now() of each utterance's first loud block; log: per utterance sent
      // to the server, {onset, sent, heardAt, text} (performance.now() ms), for tests and timing.
      const mic = {level: 0, speaking: false, utterances: 0, heard: [], onsets: [], log: []};
      state.mic = mic;
      const take = (frame) => {
        const block = new Float32Array(frame.numberOfFrames);
        frame.copyTo(block, {planeIndex: 0, format: "f32-planar"});
        rate = frame.sampleRate;
        const t = frame.timestamp / 1000;  // ms on the capture clock, at the block's first sample
        frame.close();
        offset = Math.min(offset, performance.now() - (t + block.length / rate * 1000));
        let sum = 0;
        for (let i = 0; i < block.length; i++) sum += block[i] * block[i];
        level = Math.sqrt(sum / block.length);
        mic.level = level;
        if (level > opts.threshold) {
          lastVoice = t;
          if (!current) {
            current = preRoll.splice(0); started = t; startedAt = t + offset;
            mic.speaking = true; mic.onsets.push(startedAt);
          }
        }
        if (current) {
          current.push(block);
          if (t - lastVoice > opts.silenceMs || t - started > opts.maxMs) {
            const blocks = current;
            current = null;
            mic.speaking = false;
            if (t - started >= opts.minMs) upload(blocks, startedAt);
          }
        } else {
          preRoll.push(block);
          while (preRoll.length * block.length > rate * opts.preRollMs / 1000) preRoll.shift();
        }
      };
      (async () => {
        try {
          for (;;) {
            const {value, done} = await reader.read();
            if (done) return;
            if (stopped) { value.close(); return; }
            take(value);
          }
        } catch (e) {
          if (!stopped) window.DynaCU.errors.push("listen: " + e);
        }
      })();
      // What onUtterance judges before its first await is a verdict of heard speech.
      function hand(text) {
        state.hearing += 1;
        try { onUtterance(text, {at: now()}); } finally { state.hearing -= 1; }
      }
      async function upload(blocks, onset) {
        mic.utterances += 1;
        const sent = performance.now();
        try {
          const response = await fetch("/api/listen", {method: "POST", headers: {"Content-Type": "audio/wav"}, body: encodeWav(blocks, rate)});
          const data = await response.json();
          if (!response.ok) throw new Error(data.error || ("HTTP " + response.status));
          mic.heard.push(data.text);
          mic.log.push({onset, sent, heardAt: performance.now(), text: data.text});
          if (data.text && result() === "pending") hand(data.text);
        } catch (e) {
          window.DynaCU.errors.push("listen: " + e);
        }
      }
      return {
        level: () => level,
        stop() { stopped = true; reader.cancel().catch(() => {}); track.stop(); },
      };
    },
    succeed() { return finish(state.episode.success); },
    /** End the episode as "timeout" (a window the page gave the agent has closed). */
    timeout() { ctx.stopAudio(); return finish("timeout"); },
    fail(name) {
      if (!state.episode.failures.includes(name)) throw new Error("undeclared failure " + name);
      return finish(name);
    },
    get result() { return result(); },
  };

  async function load(definition) {
    const response = await fetch("/api/episode", {cache: "no-store"});
    if (!response.ok) throw new Error("episode data: HTTP " + response.status);
    state.episode = await response.json();
    state.checks = Object.fromEntries((state.episode.checklist || []).map((name) => [name, false]));
    if (state.episode.checklist && state.episode.checklist.length) {
      root.dataset.dynacuChecklist = JSON.stringify(state.checks);
    }
    ctx.rng = makeRng(state.episode.seed);
    root.dataset.dynacuTask = state.episode.id;
    if (state.episode.audio.length) {
      state.audioContext = new AudioContext();
      state.buffers = await Promise.all(state.episode.audio.map(async (clip) => {
        const r = await fetch(clip.src);
        if (!r.ok) throw new Error("audio " + clip.src + ": HTTP " + r.status);
        return state.audioContext.decodeAudioData(await r.arrayBuffer());
      }));
    }
    if (definition.setup) await definition.setup(ctx);
  }

  window.DynaCU = {
    ready: false,
    started: false,
    error: null,
    errors: [],
    normalize,
    readings: (kind, text) => [...readings(kind, text)].sort(),
    /** Privileged checks for tests: does `text` match / mention an accepted answer of `field`? */
    matches: (field, text) => ctx.matches(field, text),
    mentions: (field, text) => ctx.mentions(field, text),
    /** Microphone state while the page listens: level, speaking, utterances, heard (privileged). */
    get mic() { return state.mic || null; },
    /** The page's verdicts of spoken answers, {field, text, verdict, at} each (privileged; a copy). */
    get verdicts() { return state.verdicts.map((v) => Object.assign({}, v)); },
    task(definition) {
      state.definition = definition;
      load(definition).then(
        () => { window.DynaCU.ready = true; },
        (e) => { window.DynaCU.error = String(e && e.stack || e); },
      );
    },
    /** Called by the env once ready: t = 0. Clips with autoplay (the default) are scheduled. */
    start() {
      if (window.DynaCU.started) return false;
      window.DynaCU.started = true;
      state.t0 = performance.now();
      const def = state.definition;
      if (state.audioContext) {
        state.audioContext.resume();  // pages that schedule their own clips need it running too
        if (def.autoplayAudio !== false) state.episode.audio.forEach((clip, i) => ctx.playClip(i, clip.t));
      }
      if (def.start) def.start(ctx);
      return true;
    },
    now,
  };

  window.getTaskResult = function () {
    if (result() === "pending" && state.t0 !== null && state.episode && now() >= state.episode.timeLimit) {
      ctx.stopAudio();
      finish("timeout");
    }
    return result();
  };

  window.getTaskChecklist = function () {
    window.getTaskResult();  // a time limit that has passed freezes the checklist too
    return root.dataset.dynacuChecklist ? JSON.parse(root.dataset.dynacuChecklist) : null;
  };

  window.addEventListener("error", (e) => window.DynaCU.errors.push(String(e.message)));
  window.addEventListener("unhandledrejection", (e) => window.DynaCU.errors.push(String(e.reason)));
})();
