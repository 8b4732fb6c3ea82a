// rlsi selection page: the rule, the scores over K (one line per lambda1) and the table of a path of fits, the
// recommended point marked. Data: #rlsi-data (rlsi.explorer.selection).
"use strict";
(function () {
  const { el, svg, clear, byId, num, int, topicColour } = RL;
  const data = RL.readData();
  const col = {};
  data.columns.forEach(([key], i) => { col[key] = i; });
  const value = (row, key) => row[col[key]];
  const ks = Array.from(new Set(data.rows.map((r) => value(r, "n_components")))).sort((a, b) => a - b);
  const lambdas = Array.from(new Set(data.rows.map((r) => value(r, "lambda1")))).sort((a, b) => b - a);
  const state = { picked: data.recommended };
  // decimals of each column, as selection.md writes them (rlsi.selection.result.COLUMNS)
  const fixed = (d) => (v) => Number(v).toFixed(d);
  const FORMAT = { lambda1: (v) => String(v), completion: fixed(4), completion_se: fixed(4), npmi: fixed(3),
                   stability: fixed(3), terms_per_topic: fixed(1), seconds: fixed(1) };
  const cell = (key, v) => (v === null || v === undefined ? "—" : (FORMAT[key] || ((x) => int(x)))(v));
  const pointName = (i) => `K=${value(data.rows[i], "n_components")}, λ1=${value(data.rows[i], "lambda1")}`;
  const rowAt = (k, lam) => data.rows.findIndex((r) => value(r, "n_components") === k && value(r, "lambda1") === lam);

  function star(cx, cy, r) {
    let d = "";
    for (let i = 0; i < 10; i++) {
      const a = -Math.PI / 2 + (i * Math.PI) / 5, rr = i % 2 ? r * 0.45 : r;
      d += (i ? "L" : "M") + (cx + rr * Math.cos(a)).toFixed(1) + "," + (cy + rr * Math.sin(a)).toFixed(1);
    }
    return d + "Z";
  }

  function drawPanel(node, column) {
    const series = lambdas.map((lam, j) => ({
      values: ks.map((k) => { const i = rowAt(k, lam); return i < 0 ? null : value(data.rows[i], column); }),
      colour: topicColour(j), width: 2, label: `λ1 = ${lam}`, key: j }));
    const opts = { width: 460, height: 230, xLabels: ks.map(String) };
    if (column === "completion") {  // the range holds the error bars
      const ends = data.rows.flatMap((r) => [value(r, "completion") - value(r, "completion_se"),
                                              value(r, "completion") + value(r, "completion_se")]).filter(isFinite);
      opts.yMin = Math.min(...ends); opts.yMax = Math.max(...ends);
    }
    if (column === "stability" && data.stability_threshold !== null) {
      opts.yMin = Math.min(data.stability_threshold, 1); opts.yMax = Math.max(data.stability_threshold, 0);
    }
    const chart = RL.lineChart(node, series, opts);
    if (column === "stability" && data.stability_threshold !== null) {
      const y = chart.y(data.stability_threshold);
      node.appendChild(svg("line", { x1: chart.box.left, x2: chart.box.left + chart.box.width, y1: y, y2: y,
                                     stroke: "#8a93a3", "stroke-dasharray": "2,3" }));
    }
    data.rows.forEach((r, i) => {
      const v = value(r, column);
      if (v === null) return;
      const x = chart.x(ks.indexOf(value(r, "n_components"))), j = lambdas.indexOf(value(r, "lambda1"));
      if (column === "completion") {
        const se = value(r, "completion_se");
        node.appendChild(svg("line", { x1: x, x2: x, y1: chart.y(v - se), y2: chart.y(v + se), stroke: topicColour(j) }));
      }
      node.appendChild(svg("circle", { cx: x, cy: chart.y(v), r: 4, fill: topicColour(j), "data-row": i,
                                       onclick: () => pick(i) }, svg("title", { text: `${pointName(i)}: ${cell(column, v)}` })));
      if (i === data.recommended) {
        node.appendChild(svg("path", { d: star(x, chart.y(v), 11), fill: "#d62728", stroke: "#fff", "data-point": "recommended",
                                       onclick: () => pick(i) }, svg("title", { text: `recommended: ${pointName(i)}` })));
      }
      if (i === state.picked && i !== data.recommended) {
        node.appendChild(svg("circle", { cx: x, cy: chart.y(v), r: 8, fill: "none", stroke: "#1d2430", "stroke-width": 2,
                                         "data-point": "picked" }));
      }
    });
  }

  function drawPanels() {
    const box = clear(byId("panels"));
    for (const [column, label] of data.panels) {
      const node = svg("svg", { class: "chart", role: "img", "aria-label": label, "data-column": column });
      box.appendChild(el("figure", {}, el("figcaption", { text: label }), node));
      drawPanel(node, column);
    }
  }

  function drawTable() {
    const head = clear(byId("table-head"));
    for (const [key, header] of data.columns) head.appendChild(el("th", { class: key === "lambda1" || key === "n_components" ? null : "num", text: header }));
    const body = clear(byId("table-body"));
    data.rows.forEach((r, i) => {
      const tr = el("tr", { class: ["clickable", i === data.recommended ? "recommended" : "", i === state.picked ? "current" : ""].join(" ").trim(),
                            tabindex: 0, "data-row": i, "aria-label": i === data.recommended ? `recommended: ${pointName(i)}` : null,
                            onclick: () => pick(i), onkeydown: (ev) => { if (ev.key === "Enter" || ev.key === " ") { pick(i); ev.preventDefault(); } } },
        data.columns.map(([key]) => el("td", { class: key === "lambda1" || key === "n_components" ? null : "num",
                                               text: key === "started_from" && value(r, key) !== null ? String(value(r, key)) : cell(key, value(r, key)) })));
      body.appendChild(tr);
    });
  }

  function drawLegend() {
    const box = clear(byId("legend"));
    lambdas.forEach((lam, j) => box.appendChild(el("span", {}, el("span", { class: "swatch", style: `background:${topicColour(j)}` }), `λ1 = ${lam}`)));
    box.appendChild(el("span", {}, el("span", { class: "swatch", style: "background:#d62728" }), "recommended"));
  }

  function pick(i) {
    state.picked = i;
    drawPanels();
    drawTable();
    byId("live").textContent = `${pointName(i)} selected`;
  }

  function init() {
    const s = data.settings;
    byId("facts").textContent = `${int(data.rows.length)} points (K ${ks.join(", ")}; λ1 ${lambdas.join(", ")}), two seeds` +
      (s.n_train ? `, ${int(s.n_train)} training and ${int(s.n_held_out)} held-out documents of ${int(s.n_terms)} terms` : "") +
      (data.seconds ? `, ${num(data.seconds, 3)} s in all.` : ".");
    byId("rule").textContent = `${pointName(data.recommended)}: ${data.rule}.`;
    drawLegend();
    drawPanels();
    drawTable();
    document.body.setAttribute("data-ready", "1");
  }

  init();
})();
