// rlsi explorer pages: helpers shared by the topic explorer and the tracking page.
// Text from the model and the corpus is only ever set as text (textContent), never parsed as HTML.
"use strict";
const RL = (function () {
  const SVGNS = "http://www.w3.org/2000/svg";

  function setAttrs(node, attrs) {
    for (const key of Object.keys(attrs || {})) {
      const value = attrs[key];
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
  }

  function append(node, children) {
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" || typeof child === "number"
        ? document.createTextNode(String(child)) : child);
    }
    return node;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    return append(node, children);
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVGNS, tag);
    setAttrs(node, attrs);
    return append(node, children);
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function byId(id) { return document.getElementById(id); }

  function readData() { return JSON.parse(byId("rlsi-data").textContent); }

  // numbers as the page shows them
  function num(x, digits) {
    if (x === null || x === undefined || !isFinite(x)) return "n/a";
    const d = digits === undefined ? 3 : digits;
    if (x === 0) return "0";
    const a = Math.abs(x);
    if (a >= 1e5 || a < 1e-3) return x.toExponential(d - 1);
    return Number(x.toPrecision(d)).toString();
  }

  function pct(x, digits) {
    if (x === null || x === undefined || !isFinite(x)) return "n/a";
    return (100 * x).toFixed(digits === undefined ? 1 : digits) + "%";
  }

  function int(n) { return Number(n).toLocaleString("en-US"); }

  // a distinct colour per topic id (golden-angle hues)
  function topicColour(k, alpha) {
    const hue = (k * 137.508) % 360;
    return alpha === undefined ? `hsl(${hue.toFixed(1)},62%,42%)` : `hsla(${hue.toFixed(1)},62%,42%,${alpha})`;
  }

  // sign balance in [-1, 1]: -1 negative (orange), 0 grey, +1 positive (blue)
  function balanceColour(b) {
    const grey = [150, 150, 160], pos = [40, 102, 177], neg = [196, 83, 45];
    const t = Math.max(-1, Math.min(1, b || 0));
    const end = t >= 0 ? pos : neg;
    const w = Math.abs(t);
    const c = grey.map((g, i) => Math.round(g + (end[i] - g) * w));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }

  // a line chart in an <svg class="chart">: series [{values, colour, label, width, dash}] over x = 0..n-1;
  // null values break a line. Returns {x, y, box} to draw more on it.
  function lineChart(node, series, opts) {
    const o = Object.assign({ width: 520, height: 220, left: 46, right: 28, top: 10, bottom: 28,
                              xLabels: null, yLabel: "", yMin: null, yMax: null }, opts || {});
    clear(node);
    node.setAttribute("viewBox", `0 0 ${o.width} ${o.height}`);
    let n = 0, lo = Infinity, hi = -Infinity;
    for (const s of series) {
      n = Math.max(n, s.values.length);
      for (const v of s.values) if (v !== null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    }
    if (o.yMin !== null) lo = Math.min(lo, o.yMin);
    if (o.yMax !== null) hi = Math.max(hi, o.yMax);
    if (!isFinite(lo)) { lo = 0; hi = 1; }
    if (hi === lo) { hi = lo + (Math.abs(lo) || 1) * 0.1; lo = lo - (hi - lo); }
    const W = o.width - o.left - o.right, H = o.height - o.top - o.bottom;
    const x = (i) => o.left + (n <= 1 ? W / 2 : (i * W) / (n - 1));
    const y = (v) => o.top + H - ((v - lo) / (hi - lo)) * H;
    const axis = svg("g", { class: "axis", "aria-hidden": "true" });
    axis.appendChild(svg("line", { x1: o.left, y1: o.top + H, x2: o.left + W, y2: o.top + H, stroke: "#8a93a3" }));
    axis.appendChild(svg("line", { x1: o.left, y1: o.top, x2: o.left, y2: o.top + H, stroke: "#8a93a3" }));
    for (const v of [lo, (lo + hi) / 2, hi]) {
      axis.appendChild(svg("text", { x: o.left - 4, y: y(v) + 4, "text-anchor": "end", "font-size": 10,
                                     fill: "#5b6576", text: num(v, 3) }));
    }
    const labels = o.xLabels || [];
    const every = Math.max(1, Math.ceil(n / 8));
    for (let i = 0; i < n; i += every) {
      axis.appendChild(svg("text", { x: x(i), y: o.top + H + 16, "text-anchor": "middle", "font-size": 10,
                                     fill: "#5b6576", text: labels[i] !== undefined ? labels[i] : String(i + 1) }));
    }
    node.appendChild(axis);
    for (const s of series) {
      let d = "", open = false;
      s.values.forEach((v, i) => {
        if (v === null || !isFinite(v)) { open = false; return; }
        d += (open ? "L" : "M") + x(i).toFixed(1) + "," + y(v).toFixed(1);
        open = true;
      });
      if (!d) continue;
      const path = svg("path", { d, fill: "none", stroke: s.colour || "#2866b1", "stroke-width": s.width || 1.5,
                                 "stroke-dasharray": s.dash || null, class: s.cls || null,
                                 "data-series": s.key === undefined ? null : s.key },
                       s.label ? svg("title", { text: s.label }) : null);
      if (s.onclick) { path.addEventListener("click", s.onclick); path.style.cursor = "pointer"; }
      node.appendChild(path);
    }
    return { x, y, lo, hi, box: { left: o.left, top: o.top, width: W, height: H } };
  }

  return { el, svg, clear, byId, readData, num, pct, int, topicColour, balanceColour, lineChart };
})();
