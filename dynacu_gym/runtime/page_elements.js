/* page_elements.js: what a person could see and use on the page at this instant.
 *
 * Evaluated by the env (one round trip, beside the screenshot's grab) as a function of
 * {maxItems, maxText}. Returns {items, truncated, width, height}: items in document order,
 * each {role, text, label, value, states, box: [x, y, w, h], center: [x, y]} in CSS pixels
 * of the viewport, which are the screen's pixels (the browser is full screen at 0,0).
 *
 * What is listed:
 *   - interactive elements: links, buttons, inputs (with their value), textareas, selects (the
 *     chosen option), checkboxes and radios (their state), contenteditable regions, elements
 *     with an acting ARIA role, and elements the page listens to for clicks;
 *   - text blocks: the rendered text of each block-level element, joined per block.
 * What is not: anything hidden (display, visibility, opacity below 0.05, a transparent text
 * colour), zero-sized, off the viewport or clipped away by an ancestor that hides overflow,
 * or covered (the hit test at its point finds something else). Text is what is rendered:
 * text nodes, word by word where a box clips them, never attributes, except the label of a
 * control that shows no text of its own (an icon button's aria-label or title).
 */
(opts) => {
  const maxItems = opts.maxItems, maxText = opts.maxText;
  const W = window.innerWidth, H = window.innerHeight;
  const styles = new Map();
  const style = (el) => {
    let s = styles.get(el);
    if (!s) { s = getComputedStyle(el); styles.set(el, s); }
    return s;
  };
  const clickable = window.__dynacuClickable || new WeakSet();

  // ---- visibility ---------------------------------------------------------------------------
  // The rectangle of the viewport that `el`'s ancestors (and el) leave visible, or null.
  const clips = new Map();
  function clipOf(el) {
    if (!el || el.nodeType !== 1) return [0, 0, W, H];
    if (clips.has(el)) return clips.get(el);
    // A fixed element escapes its ancestors' overflow (none of the apps transforms one).
    let rect = style(el).position === "fixed" ? [0, 0, W, H] : clipOf(el.parentElement);
    if (rect) {
      const s = style(el);
      const clipsX = s.overflowX !== "visible", clipsY = s.overflowY !== "visible";
      const clipped = s.clipPath !== "none" || (s.clip && s.clip !== "auto");
      if (clipsX || clipsY || clipped) {
        const b = el.getBoundingClientRect();
        rect = [
          clipsX || clipped ? Math.max(rect[0], b.left) : rect[0],
          clipsY || clipped ? Math.max(rect[1], b.top) : rect[1],
          clipsX || clipped ? Math.min(rect[2], b.right) : rect[2],
          clipsY || clipped ? Math.min(rect[3], b.bottom) : rect[3],
        ];
        if (rect[2] - rect[0] < 1 || rect[3] - rect[1] < 1) rect = null;
      }
    }
    clips.set(el, rect);
    return rect;
  }
  // Whether `el` and its ancestors are rendered, visible and opaque enough to be seen.
  const shown = new Map();
  function isShown(el) {
    if (!el || el.nodeType !== 1) return true;
    if (shown.has(el)) return shown.get(el);
    const s = style(el);
    let ok = s.display !== "none" && isShown(el.parentElement);
    if (ok) ok = opacity(el) >= 0.05;
    shown.set(el, ok);
    return ok;
  }
  const opacities = new Map();
  function opacity(el) {
    if (!el || el.nodeType !== 1) return 1;
    if (opacities.has(el)) return opacities.get(el);
    const value = Number(style(el).opacity) * opacity(el.parentElement);
    opacities.set(el, value);
    return value;
  }
  const visibleStyle = (el) => {
    const s = style(el);
    return s.visibility === "visible" && isShown(el);
  };
  const alpha = (colour) => {
    const m = /rgba?\(([^)]+)\)/.exec(colour || "");
    if (!m) return 1;
    const parts = m[1].split(/[\s,/]+/).filter(Boolean);
    return parts.length >= 4 ? Number(parts[3]) : 1;
  };
  const textVisible = (el) => {
    const s = style(el);
    return alpha(s.color) >= 0.05 && alpha(s.webkitTextFillColor || s.color) >= 0.05 &&
      parseFloat(s.fontSize) >= 4;
  };
  // The part of rect r that the clip leaves, or null.
  function clipRect(r, clip) {
    const x0 = Math.max(r.left, clip[0]), y0 = Math.max(r.top, clip[1]);
    const x1 = Math.min(r.right, clip[2]), y1 = Math.min(r.bottom, clip[3]);
    return x1 - x0 >= 1 && y1 - y0 >= 1 ? [x0, y0, x1, y1] : null;
  }
  // Whether the hit test at (x, y) reaches `el` (the element itself or what it contains).
  function reaches(el, x, y) {
    const hit = document.elementFromPoint(x, y);
    if (!hit) return false;
    if (el.contains(hit) || hit === el) return true;
    // An element that takes no pointer events lets the hit through to what holds it.
    return hit.contains(el) && style(el).pointerEvents === "none";
  }
  // The first point of the visible rect v (x0, y0, x1, y1) where `el` is not covered.
  function openPoint(el, v) {
    const w = v[2] - v[0], h = v[3] - v[1];
    const points = [[0.5, 0.5], [0.25, 0.5], [0.75, 0.5], [0.5, 0.25], [0.5, 0.75]];
    for (const [fx, fy] of points) {
      const x = v[0] + fx * w, y = v[1] + fy * h;
      if (reaches(el, x, y)) return [Math.round(x), Math.round(y)];
    }
    return null;
  }

  // ---- what an element is ------------------------------------------------------------------
  const ROLES = new Set(["button", "link", "checkbox", "radio", "switch", "tab", "menuitem",
    "menuitemcheckbox", "menuitemradio", "option", "textbox", "searchbox", "combobox",
    "listbox", "slider", "spinbutton", "treeitem", "gridcell"]);
  const INPUT_ROLES = {button: "button", submit: "button", reset: "button", image: "button",
    checkbox: "checkbox", radio: "radio", range: "slider", number: "spinbutton",
    search: "searchbox", file: "button", color: "button"};
  function roleOf(el) {
    const aria = (el.getAttribute("role") || "").trim().split(/\s+/)[0];
    if (ROLES.has(aria)) return aria;
    const tag = el.tagName.toLowerCase();
    if (tag === "a" && el.hasAttribute("href")) return "link";
    if (tag === "button" || tag === "summary") return "button";
    if (tag === "input") {
      const type = (el.getAttribute("type") || "text").toLowerCase();
      if (type === "hidden") return null;
      return INPUT_ROLES[type] || "textbox";
    }
    if (tag === "textarea") return "textbox";
    if (tag === "select") return "combobox";
    if (tag === "label" && el.control) return "label";
    if (el.isContentEditable && !(el.parentElement && el.parentElement.isContentEditable)) {
      return "editable";
    }
    if (clickable.has(el)) return "clickable";
    return null;
  }
  const isBlock = (el) => {
    const d = style(el).display;
    return d !== "inline" && d !== "contents";
  };
  const clip = (text) => {
    const t = text.replace(/\s+/g, " ").trim();
    return t.length > maxText ? t.slice(0, maxText - 1) + "\u2026" : t;
  };

  // ---- interactive elements ----------------------------------------------------------------
  const owners = new Map();  // element -> item (interactive elements and text blocks)
  const items = [];
  const all = document.body ? document.body.querySelectorAll("*") : [];
  for (const el of all) {
    const role = roleOf(el);
    if (!role) continue;
    // A checkbox inside its label is listed once: as the label, with its state.
    const holder = el.parentElement && el.parentElement.closest("label");
    if (holder && holder.control === el && roleOf(holder)) continue;
    if (!visibleStyle(el)) continue;
    const c = clipOf(el);
    if (!c) continue;
    const b = el.getBoundingClientRect();
    const v = clipRect(b, c);
    if (!v) continue;
    const point = openPoint(el, v);
    if (!point) continue;
    const item = {role, text: [], label: "", value: "", states: [], el,
      box: [v[0], v[1], v[2] - v[0], v[3] - v[1]], center: point};
    const tag = el.tagName.toLowerCase();
    let control = el;
    if (role === "label") {
      control = el.control;
      const type = control.tagName.toLowerCase() === "input" ? (control.type || "text") : "";
      item.role = INPUT_ROLES[type] || "label";
    }
    if (tag === "input" && !["checkbox", "radio", "range"].includes(el.type)) {
      if (["button", "submit", "reset"].includes(el.type)) item.text.push(el.value);
      else if (el.type === "password") item.value = "\u2022".repeat(el.value.length);
      else if (el.value) item.value = el.value;
      else if (el.placeholder) item.label = el.placeholder;
    } else if (tag === "input" && el.type === "range") {
      item.value = el.value;
    } else if (tag === "textarea") {
      if (el.value) item.value = el.value;
      else if (el.placeholder) item.label = el.placeholder;
    } else if (tag === "select") {
      const chosen = el.selectedOptions && el.selectedOptions[0];
      item.value = chosen ? chosen.textContent : "";
    }
    const checkable = control.tagName && control.tagName.toLowerCase() === "input" &&
      ["checkbox", "radio"].includes(control.type);
    if (checkable) item.states.push(control.checked ? "checked" : "unchecked");
    else if (el.getAttribute("aria-checked")) {
      item.states.push(el.getAttribute("aria-checked") === "true" ? "checked" : "unchecked");
    }
    if (document.activeElement === el || document.activeElement === control) {
      item.states.push("focused");
    }
    if (control.disabled || el.getAttribute("aria-disabled") === "true") item.states.push("disabled");
    const expanded = el.getAttribute("aria-expanded");
    if (expanded) item.states.push(expanded === "true" ? "expanded" : "collapsed");
    if (el.getAttribute("aria-pressed") === "true") item.states.push("pressed");
    if (el.getAttribute("aria-selected") === "true") item.states.push("selected");
    owners.set(el, item);
    items.push(item);
  }

  // ---- rendered text -----------------------------------------------------------------------
  // Each text node's visible words go to its owner: the nearest interactive element holding
  // it, else the nearest block-level element (a paragraph keeps its bold words).
  function ownerOf(node) {
    let el = node.parentElement, block = null;
    while (el && el !== document.body) {
      if (owners.has(el) && owners.get(el).role !== "text") return owners.get(el);
      if (!block && isBlock(el)) block = el;
      el = el.parentElement;
    }
    block = block || document.body;
    let item = owners.get(block);
    if (!item) {
      item = {role: "text", text: [], label: "", value: "", states: [], el: block,
        box: null, center: null};
      owners.set(block, item);
      items.push(item);
    }
    return item;
  }
  // The nearest element (el or an ancestor) that clips what overflows it.
  function clipper(el) {
    for (; el && el.nodeType === 1; el = el.parentElement) {
      const s = style(el);
      if (s.overflowX !== "visible" || s.overflowY !== "visible") return el;
    }
    return null;
  }
  // Text as it is drawn: a label styled in capitals reads in capitals.
  const transformed = (text, how) => how === "uppercase" ? text.toUpperCase() :
    how === "lowercase" ? text.toLowerCase() :
    how === "capitalize" ? text.replace(/(^|\s)(\S)/g, (m, a, b) => a + b.toUpperCase()) : text;
  const range = document.createRange();
  function visibleWords(node, parent, c) {
    range.selectNodeContents(node);
    const whole = range.getBoundingClientRect();
    if (whole.width < 1 || whole.height < 1) return null;
    const inside = whole.left >= c[0] && whole.top >= c[1] && whole.right <= c[2] &&
      whole.bottom <= c[3];
    const pieces = [];  // [text, rect]
    if (inside) {
      for (const r of range.getClientRects()) {
        if (r.width >= 1 && r.height >= 1) { pieces.push([null, r]); }
      }
      if (!pieces.length) return null;
      // A line whose centre another element covers is not seen; the others are.
      const open = pieces.filter(([, r]) => reaches(parent, (r.left + r.right) / 2, (r.top + r.bottom) / 2));
      if (open.length === pieces.length) return {text: node.data, rects: pieces.map((p) => p[1])};
      if (!open.length) return null;
    }
    // Cut by a clip or partly covered: word by word. Where the clipping box ends its text
    // with an ellipsis, only the words it shows whole count, and the ellipsis follows them.
    const ellipsis = clipper(parent) && style(clipper(parent)).textOverflow === "ellipsis";
    const words = [], rects = [];
    let cut = false;
    const re = /\S+/g;
    let m;
    while ((m = re.exec(node.data))) {
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const r = range.getBoundingClientRect();
      const cx = (r.left + r.right) / 2, cy = (r.top + r.bottom) / 2;
      if (r.width < 1 || cx < c[0] || cx > c[2] || cy < c[1] || cy > c[3]) { cut = true; continue; }
      if (ellipsis && (r.right > c[2] + 0.5 || r.left < c[0] - 0.5)) { cut = true; continue; }
      if (!reaches(parent, cx, cy)) continue;
      words.push(m[0]);
      rects.push(r);
    }
    if (!words.length) return null;
    return {text: words.join(" ") + (ellipsis && cut ? "\u2026" : ""), rects};
  }
  const walker = document.createTreeWalker(document.body || document.documentElement,
    NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!/\S/.test(node.data)) continue;
    const parent = node.parentElement;
    if (!parent || !visibleStyle(parent) || !textVisible(parent)) continue;
    const tag = parent.tagName.toLowerCase();
    if (tag === "script" || tag === "style" || tag === "noscript" || tag === "title" ||
        tag === "option" || tag === "textarea") continue;
    const c = clipOf(parent);
    if (!c) continue;
    const seen = visibleWords(node, parent, c);
    if (!seen) continue;
    const item = ownerOf(node);
    item.text.push(transformed(seen.text, style(parent).textTransform));
    if (item.role === "text") {
      for (const r of seen.rects) {
        const box = [Math.max(r.left, c[0]), Math.max(r.top, c[1]),
          Math.min(r.right, c[2]), Math.min(r.bottom, c[3])];
        item.box = item.box ? [Math.min(item.box[0], box[0]), Math.min(item.box[1], box[1]),
          Math.max(item.box[2], box[2]), Math.max(item.box[3], box[3])] : box;
        if (!item.center) {
          item.center = [Math.round((box[0] + box[2]) / 2), Math.round((box[1] + box[3]) / 2)];
        }
      }
    }
  }

  // ---- the list ----------------------------------------------------------------------------
  const listed = [];
  for (const item of items) {
    const text = clip(item.text.join(" "));
    if (item.role === "text") {
      if (!text) continue;
      const [x0, y0, x1, y1] = item.box;
      item.box = [x0, y0, x1 - x0, y1 - y0];
    } else if (!text && !item.value && !item.label) {
      // A control that shows no text: its label attribute names the icon a person sees.
      const name = item.el.getAttribute("aria-label") || item.el.getAttribute("title") ||
        item.el.getAttribute("alt") || "";
      item.label = name;
    }
    listed.push({
      role: item.role,
      text,
      label: clip(item.label || ""),
      value: clip(item.value || ""),
      states: item.states,
      box: item.box.map((n) => Math.round(n)),
      center: item.center,
      el: item.el,
    });
  }
  // Document order (an element before what it holds), as a person reads the page.
  listed.sort((a, b) => {
    if (a.el === b.el) return 0;
    const rel = a.el.compareDocumentPosition(b.el);
    return rel & (Node.DOCUMENT_POSITION_FOLLOWING | Node.DOCUMENT_POSITION_CONTAINED_BY) ? -1 : 1;
  });
  const truncated = Math.max(0, listed.length - maxItems);
  const out = listed.slice(0, maxItems).map(({el, ...rest}) => rest);
  return {items: out, truncated, width: W, height: H};
}
