/* dynacu view: what both pages share. DynaCUView.el(tag, props, ...children) builds an element
 * (props: class, text, on<event> listeners, any other key an attribute); svg() the same in SVG. */
(function () {
  "use strict";
  const SVG = "http://www.w3.org/2000/svg";

  function setProps(node, props) {
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null) continue;
      if (key === "class") node.setAttribute("class", value);
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
  }
  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child !== null && child !== undefined && child !== false && child !== "") {
        node.append(child instanceof Node ? child : String(child));
      }
    }
    return node;
  }
  const el = (tag, props, ...children) => {
    const node = document.createElement(tag);
    setProps(node, props);
    return append(node, children);
  };
  const svg = (tag, props, ...children) => {
    const node = document.createElementNS(SVG, tag);
    setProps(node, props);
    return append(node, children);
  };
  const secs = (t) => (t === undefined || t === null || t === "" ? "-" : `${Number(t).toFixed(1)} s`);
  const data = () => JSON.parse(document.getElementById("data").textContent);

  window.DynaCUView = {el, svg, secs, data};
})();
