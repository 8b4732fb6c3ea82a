// rlsi topic explorer: the topic map, the signed term bars with the relevance slider, the term lookup,
// the documents at both ends of a topic, the diagnostics and the document map, all linked by the selected
// topic. Data: the JSON in #rlsi-data (rlsi.explorer.data). Topic k is shown as T(k+1), with its name after it
// when it has one, as `rlsi topics`.
"use strict";
(function () {
  const { el, svg, clear, byId, num, pct, int, topicColour, balanceColour } = RL;
  const data = RL.readData();
  const M = data.model, T = data.topics, TERMS = data.terms, DOCS = data.docs, S = data.settings;
  const K = M.n_topics, STEPS = S.relevance_steps;
  const groupOf = new Array(K).fill(0);
  M.groups.forEach((g, gi) => { for (let k = g.start; k < g.stop; k++) groupOf[k] = gi; });
  // T1, with the topic's name after it when it has one (seed words' names: T1 [hockey]), as `rlsi topics`
  const label = (k) => "T" + (k + 1) + (T.names && T.names[k] ? ` [${T.names[k]}]` : "");

  // ------------------------------------------------------------------ terms of a topic
  const entries = T.entries.map((flat) => {
    const out = [];
    for (let i = 0; i < flat.length; i += 3) out.push({ t: flat[i], w: flat[i + 1], e: flat[i + 2] });
    return out;
  });

  // The shown terms of topic k at slider step `step`: {pos: [...], neg: [...]}, each side by decreasing
  // relevance lam * |w| / scale + (1 - lam) * exclusivity; ties: larger |w|, then smaller term index
  // (rlsi.explorer.terms.rank computes the same).
  function ranked(k, step) {
    const lam = step / STEPS;
    const side = (keep, scale, quota) => {
      const rel = (x) => lam * (Math.abs(x.w) / scale) + (1 - lam) * x.e;
      const list = entries[k].filter(keep).map((x) => ({ t: x.t, w: x.w, e: x.e, r: rel(x) }));
      list.sort((a, b) => (b.r - a.r) || (Math.abs(b.w) - Math.abs(a.w)) || (a.t - b.t));
      return list.slice(0, quota);
    };
    return { pos: side((x) => x.w > 0, T.scale[k][0], T.quota[k][0]),
             neg: side((x) => x.w < 0, T.scale[k][1], T.quota[k][1]) };
  }

  const headline = entries.map((_, k) => {
    const r = ranked(k, STEPS);
    const side = T.sign[k] < 0 ? r.neg : r.pos;
    return side.slice(0, 4).map((x) => TERMS.names[x.t]).join(" ") || "(empty topic)";
  });

  // ------------------------------------------------------------------ state
  const state = { k: 0, step: STEPS, sort: "id", group: -1 };
  const hash = /^#T(\d+)$/.exec(window.location.hash || "");
  if (hash && +hash[1] >= 1 && +hash[1] <= K) state.k = +hash[1] - 1;
  const sortKeys = {
    id: (k) => k,
    share: (k) => (T.share ? -T.share[k] : k),
    nnz: (k) => -T.nnz[k],
    npmi: (k) => (T.npmi && T.npmi[k] !== null ? -T.npmi[k] : Infinity),
  };
  function order() {
    const key = sortKeys[state.sort];
    return Array.from({ length: K }, (_, k) => k).sort((a, b) => (key(a) - key(b)) || (a - b));
  }

  // ------------------------------------------------------------------ header and controls
  function header() {
    const weights = { signed: "signed weights", "non-negative": "non-negative weights",
                      probabilities: "weights summing to 1 per topic" }[M.weights] || M.weights;
    const parts = [M.kind, `${int(K)} topics`, `${int(M.n_terms)} terms`, weights];
    if (DOCS) parts.push(`${int(DOCS.n)} documents`);
    parts.push(`folds in ${M.input === "counts" ? "word counts" : "tf-idf"}`);
    const params = Object.keys(M.params).map((p) => `${p}=${M.params[p]}`);
    byId("facts").textContent = parts.join(" · ") + (params.length ? " · " + params.join(", ") : "");
  }

  function fillTopicSelect() {
    const select = clear(byId("topic-select"));
    const ids = order();
    if (M.groups.length > 1 && state.sort === "id") {
      M.groups.forEach((g, gi) => {
        const og = el("optgroup", { label: g.label });
        ids.filter((k) => groupOf[k] === gi).forEach((k) => og.appendChild(option(k)));
        select.appendChild(og);
      });
    } else ids.forEach((k) => select.appendChild(option(k)));
    select.value = String(state.k);
  }
  function option(k) { return el("option", { value: k, text: `${label(k)}  ${headline[k]}` }); }

  function step(delta) {
    const ids = order();
    const i = ids.indexOf(state.k);
    select(ids[(i + delta + K) % K]);
  }

  // ------------------------------------------------------------------ the topic map
  // screen coordinates (0..520) of map coordinates, the extent of xs and ys filling the square
  function frame(xs, ys, pad) {
    const min = (a) => a.reduce((m, v) => Math.min(m, v), Infinity);
    const max = (a) => a.reduce((m, v) => Math.max(m, v), -Infinity);
    const lo = [min(xs), min(ys)], hi = [max(xs), max(ys)];
    const span = Math.max(hi[0] - lo[0], hi[1] - lo[1]) || 1;
    const size = 520 - 2 * pad;
    return {
      x: (v) => pad + ((v - lo[0]) / span) * size + (size - ((hi[0] - lo[0]) / span) * size) / 2,
      y: (v) => 520 - pad - ((v - lo[1]) / span) * size - (size - ((hi[1] - lo[1]) / span) * size) / 2,
    };
  }
  const rMax = Math.max(6, Math.min(40, 230 / Math.sqrt(K)));  // the largest bubble's radius
  const box = frame(T.x, T.y, rMax + 6);
  const docBox = DOCS && DOCS.map.x.length ? frame(DOCS.map.x, DOCS.map.y, 12) : box;
  const maxShare = T.share ? Math.max(...T.share) || 1 : 1;
  const radius = (k) => (T.share ? Math.max(2.5, rMax * Math.sqrt(T.share[k] / maxShare)) : rMax * 0.55);
  const bubbles = [];

  function drawMap() {
    const svgNode = clear(byId("map"));
    svgNode.setAttribute("viewBox", "0 0 520 520");
    const node = svgNode.appendChild(svg("g", { class: "bubbles" }));
    const labels = svgNode.appendChild(svg("g", { class: "labels", "pointer-events": "none" }));
    const byArea = Array.from({ length: K }, (_, k) => k).sort((a, b) => (radius(b) - radius(a)) || (a - b));
    for (const k of byArea) {
      const title = `${label(k)}: ${headline[k]} — ` + (T.share ? `share ${pct(T.share[k])}, ` : "") +
        `${int(T.nnz[k])} non-zero terms, sign balance ${num(T.balance[k], 2)}`;
      const c = svg("circle", { cx: box.x(T.x[k]).toFixed(1), cy: box.y(T.y[k]).toFixed(1), r: radius(k).toFixed(1),
                                fill: balanceColour(T.balance[k]), "fill-opacity": T.nnz[k] ? 0.72 : 0.15,
                                stroke: "#fff", "stroke-width": 1, "data-topic": k, class: "bubble",
                                onclick: () => select(k) }, svg("title", { text: title }));
      c.style.cursor = "pointer";
      bubbles[k] = c;
      node.appendChild(c);
    }
    if (K <= 60) {
      for (let k = 0; k < K; k++) {
        labels.appendChild(svg("text", { x: box.x(T.x[k]).toFixed(1), y: (box.y(T.y[k]) + 4).toFixed(1),
                                         "text-anchor": "middle", "font-size": 11, fill: "#111", text: label(k) }));
      }
    }
    svgNode.addEventListener("keydown", (ev) => {
      if (ev.key === "ArrowRight" || ev.key === "ArrowDown") { step(1); ev.preventDefault(); }
      if (ev.key === "ArrowLeft" || ev.key === "ArrowUp") { step(-1); ev.preventDefault(); }
    });
    const kept = data.summary.map_kept;
    byId("map-note").textContent =
      `Classical MDS of the distances between topics (${S.distance === "documents"
        ? "correlation of their document vectors" : "cosine of their weights"}, each topic oriented by its dominant sign); ` +
      `the two axes keep ${pct(kept, 0)} of the distances' variance. ` +
      (T.share ? "Bubble area: the topic's share of the corpus (Σ|v| over the documents). "
               : "Bubbles of equal size: no documents were given, so shares are unknown. ") +
      "Colour: sign balance of the weights. Arrow keys on the map step through the topics.";
  }

  function markMap() {
    bubbles.forEach((c, k) => {
      c.setAttribute("stroke", k === state.k ? "#111" : "#fff");
      c.setAttribute("stroke-width", k === state.k ? 3 : 1);
      const dim = state.group >= 0 && groupOf[k] !== state.group;
      c.setAttribute("opacity", dim ? 0.2 : 1);
    });
    const c = bubbles[state.k];
    if (c && c.parentNode) c.parentNode.appendChild(c); // drawn on top
  }

  // ------------------------------------------------------------------ the selected topic
  function topicFacts(k) {
    const bits = [];
    const g = M.groups[groupOf[k]];
    if (M.groups.length > 1) bits.push(g.label);
    bits.push(`${int(T.nnz[k])} non-zero terms (${int(T.counts[k][0])} positive, ${int(T.counts[k][1])} negative; ` +
              `compactness ${pct(T.compactness[k], 2)})`);
    if (T.share) bits.push(`share ${pct(T.share[k])}`);
    if (T.mr[k] !== null) bits.push(`majority ratio ${num(T.mr[k], 3)}`);
    if (T.npmi) bits.push(`NPMI ${num(T.npmi[k], 3)}`);
    return bits.join(" · ");
  }

  function barRow(x, scale, k) {
    const width = (Math.abs(x.w) / (scale || 1)) * 100;
    const bar = el("span", { class: "bar " + (x.w < 0 ? "neg" : "pos") });
    bar.style.width = width.toFixed(1) + "%";
    const name = TERMS.names[x.t];
    return el("tr", { "data-term": name, class: name === state.term ? "hit" : null },
      el("td", { class: "negcell" }, x.w < 0 ? bar : null),
      el("td", { class: "term", text: name }),
      el("td", { class: "poscell" }, x.w > 0 ? bar : null),
      el("td", { class: "num", text: num(x.w, 4) }),
      el("td", { class: "num", text: num(x.e, 3), title: `exclusivity in ${label(k)}` }));
  }

  function drawBars() {
    const k = state.k, r = ranked(k, state.step);
    const body = clear(byId("bars-body"));
    byId("bars").setAttribute("data-topic", k);
    const scale = Math.max(T.scale[k][0], T.scale[k][1]);
    const sides = [["pos", r.pos, "positive weights", T.counts[k][0]], ["neg", r.neg, "negative weights", T.counts[k][1]]];
    for (const [key, list, name, total] of sides) {
      if (!total && key === "neg" && !T.counts[k][0]) continue;
      body.appendChild(el("tr", { class: "side" }, el("td", {
        colspan: 5, text: `${name}: ${list.length} of ${int(total)} shown` + (total ? "" : " (none)") })));
      list.forEach((x) => body.appendChild(barRow(x, scale, k)));
    }
    if (!T.nnz[k]) body.appendChild(el("tr", {}, el("td", { colspan: 5, text: "This topic is empty (every weight is zero)." })));
    byId("lambda-out").textContent = (state.step / STEPS).toFixed(1);
    negativeNote(k, r);
  }

  function negativeNote(k, r) {
    const words = (list) => list.slice(0, 4).map((x) => TERMS.names[x.t]).join(", ");
    let text;
    if (!T.nnz[k]) text = `${label(k)} is empty: the regularization set all its weights to zero.`;
    else if (!T.counts[k][1]) {
      text = `${label(k)} has no negative weights` +
        (M.weights === "signed" ? "." : ` (${M.kind} weights are never negative).`);
    } else if (!T.counts[k][0]) {
      text = `${label(k)} has only negative weights: documents that use ${words(r.neg)} get a negative ${label(k)} value, ` +
        `so its most negative documents are the ones about it (rlsi topics lists it marked (-)).`;
    } else {
      const main = T.sign[k] < 0 ? "negative" : "positive";
      text = `Read ${label(k)} as “${words(r.pos)}” against “${words(r.neg)}”: a document that uses ` +
        `${words(r.neg)} gets a lower ${label(k)} value, one that uses ${words(r.pos)} a higher one. ` +
        `Its weight is mostly ${main} (majority ratio ${num(T.mr[k], 3)})` +
        (T.sign[k] < 0 ? `; rlsi topics lists it by its negative terms, marked (-).` : ".");
    }
    byId("negative-note").textContent = text;
  }

  function drawEnds() {
    const node = clear(byId("ends"));
    if (!DOCS) {
      node.appendChild(el("p", { class: "note", text: "No documents were given (rlsi explore --corpus, or X and docs in Python)." }));
      return;
    }
    const k = state.k;
    if (!S.n_ends) {
      node.appendChild(el("p", { class: "note", text: "This page holds no documents at the ends (n_ends = 0)." }));
      return;
    }
    const heads = [`Largest ${label(k)} value`, `Most negative ${label(k)} value`];
    DOCS.ends[k].forEach((flat, side) => {
      const list = el("ol", { class: "docs", "data-side": side ? "negative" : "positive" });
      for (let i = 0; i < flat.length; i += 2) {
        const d = flat[i];
        list.appendChild(el("li", {},
          el("span", { class: "doc-title", text: DOCS.titles[d] }), " ",
          el("span", { class: "note", text: `(${DOCS.ids[d]}, v = ${num(flat[i + 1], 3)})` }),
          DOCS.snippets[d] ? el("div", { class: "snippet", text: DOCS.snippets[d] }) : null));
      }
      const empty = side ? `No document has a negative ${label(k)} value.` : `No document has a positive ${label(k)} value.`;
      node.appendChild(el("div", {}, el("h3", { text: heads[side] }), flat.length ? list : el("p", { class: "note", text: empty })));
    });
  }

  // ------------------------------------------------------------------ term lookup
  let lookupIndex = null;
  function buildLookup() {
    lookupIndex = { byName: new Map(), rows: TERMS.names.map(() => []) };
    TERMS.names.forEach((n, t) => { if (!lookupIndex.byName.has(n.toLowerCase())) lookupIndex.byName.set(n.toLowerCase(), t); });
    entries.forEach((list, k) => list.forEach((x) => lookupIndex.rows[x.t].push({ k, w: x.w, held: true })));
    TERMS.extra.forEach((flat) => { for (let i = 1; i < flat.length; i += 2) lookupIndex.rows[flat[0]].push({ k: flat[i], w: flat[i + 1], held: false }); });
  }

  function lookupInput() {
    if (!lookupIndex) buildLookup();
    const q = byId("term-input").value.trim().toLowerCase();
    const sug = clear(byId("suggest"));
    if (!q) { clear(byId("lookup")); state.term = null; drawBars(); return; }
    const exact = lookupIndex.byName.get(q);
    if (exact !== undefined) { showTerm(exact); return; }
    const found = [];
    for (const [name, t] of lookupIndex.byName) {
      if (name.startsWith(q)) found.push(t);
      if (found.length >= 8) break;
    }
    if (found.length < 8) for (const [name, t] of lookupIndex.byName) {
      if (!name.startsWith(q) && name.includes(q)) found.push(t);
      if (found.length >= 8) break;
    }
    clear(byId("lookup"));
    if (!found.length) sug.appendChild(el("span", { class: "note", text: `“${q}” is not among the terms this page holds (the top terms of each topic).` }));
    found.forEach((t) => sug.appendChild(el("button", { type: "button", text: TERMS.names[t], onclick: () => {
      byId("term-input").value = TERMS.names[t]; showTerm(t); } })));
  }

  function showTerm(t) {
    clear(byId("suggest"));
    const name = TERMS.names[t];
    state.term = name;
    const rows = lookupIndex.rows[t].slice().sort((a, b) => (Math.abs(b.w) - Math.abs(a.w)) || (a.k - b.k));
    const table = clear(byId("lookup"));
    const maxW = Math.max(...rows.map((r) => Math.abs(r.w))) || 1;
    const extra = TERMS.extra_per_term ? `, and its ${TERMS.extra_per_term} largest weights elsewhere` : "";
    table.appendChild(el("caption", { text: `“${name}”: non-zero in ${int(TERMS.nz[t])} of ${int(K)} topics; ` +
      `${rows.length} listed (the topics where it is among the top terms${extra})` }));
    table.appendChild(el("tr", {}, el("th", { text: "topic" }), el("th", { class: "negcell", text: "−" }),
      el("th", { class: "poscell", text: "+" }), el("th", { class: "num", text: "weight" }), el("th", { text: "top terms of the topic" })));
    for (const r of rows) {
      const bar = el("span", { class: "bar " + (r.w < 0 ? "neg" : "pos") });
      bar.style.width = ((Math.abs(r.w) / maxW) * 100).toFixed(1) + "%";
      table.appendChild(el("tr", { class: "clickable", tabindex: 0, "data-topic": r.k, "data-term": name,
                                   onclick: () => select(r.k), onkeydown: (ev) => { if (ev.key === "Enter") select(r.k); } },
        el("td", { text: label(r.k) }), el("td", { class: "negcell" }, r.w < 0 ? bar : null),
        el("td", { class: "poscell" }, r.w > 0 ? bar : null), el("td", { class: "num", text: num(r.w, 4) }),
        el("td", { class: "note", text: headline[r.k] })));
    }
    drawBars();
  }

  // ------------------------------------------------------------------ diagnostics
  function drawDiagnostics() {
    const Q = data.summary.quality, dl = clear(byId("summary"));
    const item = (dt, dd) => { dl.appendChild(el("dt", { text: dt })); dl.appendChild(el("dd", { text: dd })); };
    item("AvgComp (mean share of non-zero weights)", pct(Q.avg_compactness, 2));
    item("representability@10 / overlap@10", `${num(Q["avg_representability@10"], 3)} / ${num(Q["overlap@10"], 3)}`);
    item("average majority ratio", num(Q.avg_majority_ratio, 3));
    item("empty (dead) topics", data.summary.dead.length ? data.summary.dead.map(label).join(", ") : "none");
    item("NPMI coherence", data.summary.avg_npmi === null ? "n/a (needs documents)"
      : `${num(data.summary.avg_npmi, 3)} on average (top ${data.summary.coherence_terms} terms, documents as windows)`);
    const obj = M.objective, chart = byId("objective"), cap = byId("objective-note");
    if (obj && obj.values.length) {
      RL.lineChart(chart, [{ values: obj.values, colour: "#2866b1", label: obj.name }],
                   { height: 160, yLabel: obj.name });
      const v = obj.values;
      cap.textContent = `The ${obj.name} per iteration (${obj.note}): ${num(v[0], 4)} after the first of ` +
        `${v.length} iterations, ${num(v[v.length - 1], 4)} after the last.`;
    } else {
      chart.style.display = "none";
      cap.textContent = `${M.kind} records no objective per iteration.`;
    }
    drawTable();
  }

  function drawTable() {
    const body = clear(byId("topics-body"));
    for (const k of order()) {
      const cells = [el("td", { text: label(k) })];
      if (M.groups.length > 1) cells.push(el("td", { text: M.groups[groupOf[k]].label }));
      cells.push(el("td", { class: "num", text: T.share ? pct(T.share[k]) : "n/a" }),
                 el("td", { class: "num", text: int(T.nnz[k]) }),
                 el("td", { class: "num", text: pct(T.compactness[k], 2) }),
                 el("td", { class: "num", text: num(T.mr[k], 3) }),
                 el("td", { class: "num", text: T.npmi ? num(T.npmi[k], 3) : "n/a" }),
                 el("td", { text: (T.sign[k] < 0 ? "(-) " : "") + headline[k] }));
      body.appendChild(el("tr", { class: "clickable" + (k === state.k ? " current" : ""), tabindex: 0, "data-topic": k,
                                  onclick: () => select(k), onkeydown: (ev) => { if (ev.key === "Enter") select(k); } }, cells));
    }
  }

  // ------------------------------------------------------------------ the document map
  let docCanvas = null;
  function drawDocMap() {
    const panel = byId("docmap-panel");
    if (!DOCS) { panel.style.display = "none"; return; }
    docCanvas = byId("docmap");
    const m = DOCS.map;
    byId("docmap-note").textContent = `${int(m.n_drawn)} of ${int(DOCS.n)} documents` +
      (m.n_drawn < DOCS.n ? " (a seeded sample, and only documents with some topic weight)" : "") +
      ", each at the weighted mean of its topics' places on the topic map (weights |v|), coloured by its strongest topic; " +
      "the selected topic's documents are drawn larger. Hover a point for its title; click it to select its topic.";
    const tip = byId("tooltip");
    const nearest = (ev) => {
      const rect = docCanvas.getBoundingClientRect(), f = 520 / rect.width;
      const px = (ev.clientX - rect.left) * f, py = (ev.clientY - rect.top) * f;
      let best = -1, bd = 64;
      for (let i = 0; i < m.x.length; i++) {
        const dx = docBox.x(m.x[i]) - px, dy = docBox.y(m.y[i]) - py, d = dx * dx + dy * dy;
        if (d < bd) { bd = d; best = i; }
      }
      return best;
    };
    docCanvas.addEventListener("mousemove", (ev) => {
      const i = nearest(ev);
      if (i < 0) { tip.style.display = "none"; return; }
      tip.textContent = `${DOCS.titles[m.doc[i]]} — strongest topic ${label(m.topic[i])}`;
      tip.style.left = (ev.clientX + 12) + "px";
      tip.style.top = (ev.clientY + 12) + "px";
      tip.style.display = "block";
    });
    docCanvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });
    docCanvas.addEventListener("click", (ev) => { const i = nearest(ev); if (i >= 0) select(m.topic[i]); });
    paintDocMap();
  }

  function paintDocMap() {
    if (!docCanvas) return;
    const m = DOCS.map, ratio = window.devicePixelRatio || 1;
    docCanvas.width = 520 * ratio;
    docCanvas.height = 520 * ratio;
    const ctx = docCanvas.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, 520, 520);
    const dot = (i, r, colour) => {
      ctx.fillStyle = colour;
      ctx.beginPath();
      ctx.arc(docBox.x(m.x[i]), docBox.y(m.y[i]), r, 0, 2 * Math.PI);
      ctx.fill();
    };
    for (let i = 0; i < m.x.length; i++) if (m.topic[i] !== state.k) dot(i, 2, topicColour(m.topic[i], 0.35));
    for (let i = 0; i < m.x.length; i++) if (m.topic[i] === state.k) dot(i, 3.5, topicColour(m.topic[i], 0.95));
    docCanvas.setAttribute("aria-label", `Document map: ${int(m.n_drawn)} documents; ` +
      `${m.topic.filter((t) => t === state.k).length} have ${label(state.k)} as their strongest topic.`);
  }

  // ------------------------------------------------------------------ selection
  function select(k) {
    state.k = k;
    byId("topic-select").value = String(k);
    byId("topic-h").textContent = `${label(k)}: ${headline[k]}`;
    byId("topic-facts").textContent = topicFacts(k);
    markMap();
    drawBars();
    drawEnds();
    drawTable();
    paintDocMap();
    byId("live").textContent = `${label(k)} selected: ${headline[k]}`;
  }

  function init() {
    header();
    fillTopicSelect();
    const groupSel = byId("group-select");
    if (M.groups.length > 1) {
      groupSel.appendChild(el("option", { value: -1, text: "all groups" }));
      M.groups.forEach((g, gi) => groupSel.appendChild(el("option", { value: gi, text: `${g.label} (${g.stop - g.start})` })));
      groupSel.addEventListener("change", () => { state.group = +groupSel.value; markMap(); });
    } else byId("group-label").style.display = "none";
    byId("topic-select").addEventListener("change", (ev) => select(+ev.target.value));
    byId("prev").addEventListener("click", () => step(-1));
    byId("next").addEventListener("click", () => step(1));
    const sortSel = byId("sort");
    if (!T.share) sortSel.querySelector('option[value="share"]').disabled = true;
    if (!T.npmi) sortSel.querySelector('option[value="npmi"]').disabled = true;
    sortSel.addEventListener("change", () => { state.sort = sortSel.value; fillTopicSelect(); drawTable(); });
    const slider = byId("lambda");
    slider.max = STEPS;
    slider.value = state.step;
    slider.addEventListener("input", () => { state.step = +slider.value; drawBars(); });
    byId("term-input").addEventListener("input", lookupInput);
    byId("term-input").addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") { const b = byId("suggest").querySelector("button"); if (b) b.click(); }
    });
    drawMap();
    drawDiagnostics();
    drawDocMap();
    select(state.k);
    document.body.setAttribute("data-ready", "1");
  }

  init();
})();
