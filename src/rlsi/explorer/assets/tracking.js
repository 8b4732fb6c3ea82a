// rlsi tracking page: each topic's share per period (lines or stacked areas), births and deaths marked;
// a selected topic's top terms period by period and its drift. Data: #rlsi-data (rlsi.explorer.tracking).
"use strict";
(function () {
  const { el, svg, clear, byId, num, pct, int, topicColour } = RL;
  const data = RL.readData();
  const K = data.n_topics, P = data.segments.length;
  const state = { k: 0, mode: "lines" };
  // " [name]" of a named topic (seed words' names), after its label as in the reports: T1 [hockey]
  const named = (k) => (data.names && data.names[k] ? ` [${data.names[k]}]` : "");
  const lifeLabel = (k, life) => (life <= 1 ? `T${k + 1}` : `T${k + 1}.${life}`) + named(k);
  const label = (k, p) => lifeLabel(k, data.life[p === undefined ? P - 1 : p][k]);
  const termsAt = (p, k, n) => {
    const flat = data.top[p][k], out = [];
    for (let i = 0; i < flat.length && out.length < (n || 99); i += 2) out.push({ t: data.terms[flat[i]], w: flat[i + 1] });
    return out;
  };
  const lastLive = (k) => { for (let p = P - 1; p >= 0; p--) if (data.alive[p][k]) return p; return -1; };
  const headline = (k) => {
    const p = lastLive(k);
    return p < 0 ? "(never alive)" : termsAt(p, k, 4).map((x) => (x.w < 0 ? "-" : "") + x.t).join(" ");
  };

  // share fractions of topic k per life: [{life, values (null outside the life)}]
  function lives(k) {
    const out = new Map();
    for (let p = 0; p < P; p++) {
      const n = data.life[p][k], f = data.fraction[p][k];
      if (n <= 0 || !(data.alive[p][k] || f > 0)) continue;
      if (!out.has(n)) out.set(n, new Array(P).fill(null));
      out.get(n)[p] = f;
    }
    return Array.from(out, ([life, values]) => ({ life, values }));
  }

  function drawTimeline() {
    const node = byId("timeline");
    const W = 720, H = 300;
    if (state.mode === "stacked") { drawStacked(node, W, H); return; }
    const series = [];
    for (let k = 0; k < K; k++) {
      for (const l of lives(k)) {
        series.push({ values: l.values, colour: topicColour(k), width: k === state.k ? 3.5 : 1.3, key: k,
                      cls: "topic-line", label: `${lifeLabel(k, l.life)}: ${headline(k)}`,
                      onclick: () => select(k) });
      }
    }
    series.sort((a, b) => (a.key === state.k) - (b.key === state.k)); // the selected topic on top
    const chart = RL.lineChart(node, series, { width: W, height: H, xLabels: data.segments, yMin: 0 });
    for (let k = 0; k < K; k++) {
      for (const l of lives(k)) {
        const p = l.values.findIndex((v) => v !== null);
        if (p < 0) continue;
        node.appendChild(svg("circle", { cx: chart.x(p), cy: chart.y(l.values[p]), r: k === state.k ? 5 : 3.5,
                                         fill: "#fff", stroke: topicColour(k), "stroke-width": 2, "data-event": "born",
                                         onclick: () => select(k) },
          svg("title", { text: `${l.life > 1 ? "reborn" : "born"}: ${lifeLabel(k, l.life)} at ${data.segments[p]}` })));
      }
    }
    for (const e of data.events) {
      if (e.kind !== "died") continue;
      const p = data.segments.indexOf(e.segment);
      const x = chart.x(p), y = chart.y(0);
      node.appendChild(svg("path", { d: `M${x - 4},${y - 4}L${x + 4},${y + 4}M${x - 4},${y + 4}L${x + 4},${y - 4}`,
                                     stroke: topicColour(e.topic), "stroke-width": 2.5, "data-event": "died" },
        svg("title", { text: `${lifeLabel(e.topic, 1)} died at ${e.segment}` })));
    }
  }

  function drawStacked(node, W, H) {
    const lo = 0, hi = 1;
    const chart = RL.lineChart(node, [], { width: W, height: H, xLabels: data.segments, yMin: lo, yMax: hi });
    const base = new Array(P).fill(0);
    for (let k = 0; k < K; k++) {
      const top = base.map((b, p) => b + (data.fraction[p][k] || 0));
      let d = "";
      for (let p = 0; p < P; p++) d += (p ? "L" : "M") + chart.x(p).toFixed(1) + "," + chart.y(top[p]).toFixed(1);
      for (let p = P - 1; p >= 0; p--) d += "L" + chart.x(p).toFixed(1) + "," + chart.y(base[p]).toFixed(1);
      node.appendChild(svg("path", { d: d + "Z", fill: topicColour(k, k === state.k ? 0.95 : 0.55), stroke: "#fff",
                                     "stroke-width": 0.5, class: "topic-area", "data-series": k, onclick: () => select(k) },
        svg("title", { text: `${lifeLabel(k, 1)}: ${headline(k)}` })));
      top.forEach((v, p) => { base[p] = v; });
    }
  }

  function drawLegend() {
    const node = clear(byId("legend"));
    for (let k = 0; k < K; k++) {
      node.appendChild(el("button", { type: "button", "data-topic": k, "aria-pressed": k === state.k ? "true" : "false",
                                      onclick: () => select(k) },
        el("span", { class: "swatch", style: `background:${topicColour(k)}` }), `${label(k)} ${headline(k)}`));
    }
  }

  function drawTopic() {
    const k = state.k;
    byId("topic-h").textContent = `${label(k)}: ${headline(k)}`;
    const body = clear(byId("periods-body"));
    for (let p = 0; p < P; p++) {
      const terms = data.alive[p][k] ? termsAt(p, k).map((x) => `${x.t} ${x.w < 0 ? "" : "+"}${num(x.w, 3)}`).join(", ") : "(dead)";
      body.appendChild(el("tr", {}, el("td", { text: data.segments[p] }), el("td", { class: "num", text: int(data.n_docs[p]) }),
        el("td", { class: "num", text: pct(data.fraction[p][k]) }),
        el("td", { class: "num", text: data.drift[p][k] === null ? "—" : num(data.drift[p][k], 3) }),
        el("td", { text: label(k, p) + " " }, el("span", { class: "note", text: terms }))));
    }
    const drift = data.drift.map((row) => row[k]);
    RL.lineChart(byId("drift"), [{ values: drift, colour: topicColour(k), label: `drift of ${label(k)}` }],
                 { width: 720, height: 150, xLabels: data.segments, yMin: 0 });
    const moved = drift.filter((v) => v !== null);
    byId("drift-note").textContent = moved.length
      ? `Drift of ${label(k)}: 1 − cosine between its weights at the end of a period and of the one before ` +
        `(0 = unchanged); largest ${num(Math.max(...moved), 3)}, mean ${num(moved.reduce((a, b) => a + b, 0) / moved.length, 3)}.`
      : `${label(k)} has no drift to show (it was alive in fewer than two consecutive periods).`;
  }

  function drawEvents() {
    const node = clear(byId("events"));
    if (!data.events.length) { node.appendChild(el("li", { text: "No topic was born, died or was reborn." })); return; }
    for (const e of data.events) {
      const id = `T${e.topic + 1}`, name = id + named(e.topic);
      const docs = e.documents || [];
      const text = e.kind === "born"
        ? `${name} born at ${e.segment} from ${docs.length} documents no topic explained: ${docs.slice(0, 10).join(", ")}` +
          (docs.length > 10 ? ` and ${docs.length - 10} more` : "")
        : e.kind === "died" ? `${name} died at ${e.segment} (all weights zero)`
        : `${name} reborn at ${e.segment} as ${id}.${e.life} (cosine ${num(e.similarity, 2)} with its last live state: ` +
          `${e.similarity >= 0.5 ? "similar to its former self" : "about something else"})`;
      node.appendChild(el("li", {}, el("button", { type: "button", text, onclick: () => select(e.topic) })));
    }
  }

  function select(k) {
    state.k = k;
    byId("topic-select").value = String(k);
    drawTimeline();
    drawLegend();
    drawTopic();
    byId("live").textContent = `${label(k)} selected`;
  }

  function init() {
    const total = data.n_docs.reduce((a, b) => a + b, 0);
    byId("facts").textContent = `${int(P)} periods (${data.segments[0]} to ${data.segments[P - 1]}), ` +
      `${int(total)} documents, ${int(K)} topics. Share: a topic's part of the period's Σ|v|/‖d‖ over its documents.`;
    const sel = byId("topic-select");
    for (let k = 0; k < K; k++) sel.appendChild(el("option", { value: k, text: `${label(k)} ${headline(k)}` }));
    sel.addEventListener("change", () => select(+sel.value));
    const mode = byId("mode");
    mode.addEventListener("change", () => { state.mode = mode.value; drawTimeline(); });
    byId("timeline").addEventListener("keydown", (ev) => {
      if (ev.key === "ArrowRight" || ev.key === "ArrowDown") { select((state.k + 1) % K); ev.preventDefault(); }
      if (ev.key === "ArrowLeft" || ev.key === "ArrowUp") { select((state.k + K - 1) % K); ev.preventDefault(); }
    });
    drawEvents();
    select(0);
    document.body.setAttribute("data-ready", "1");
  }

  init();
})();
