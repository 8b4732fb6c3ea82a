// rlsi serve: the search page. It asks the server's JSON API (search?q=&k=&alpha=) and shows the results;
// every text from the index is set as text, never as HTML.
"use strict";
(function () {
  const config = JSON.parse(document.getElementById("config").textContent);
  const $ = (id) => document.getElementById(id);
  const form = $("search-form"), box = $("q"), slider = $("alpha"), shown = $("alpha-value");
  const results = $("results"), status = $("status");
  const BAR_PX = 40;  // the width of the largest topic contribution of a hit
  let asked = 0;  // the number of the latest search: an older answer arriving late is dropped
  let timer = null;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fmt(x, digits) { return Number(x).toFixed(digits); }

  function facts(data) {
    const parts = [data.documents.toLocaleString("en") + " documents", "generation " + data.generation];
    if (data.model_version !== null) parts.push("model version " + data.model_version);
    $("facts").textContent = parts.join(" · ");
  }

  function topicBars(topics) {
    const wrap = el("div", "topics");
    const top = Math.max(1e-12, ...topics.map((t) => Math.abs(t.weight)));
    for (const t of topics) {
      const row = el("div", "topic");
      row.dataset.topic = t.topic;
      row.title = t.label + " (" + t.terms.join(", ") + "): " + fmt(t.weight, 3);
      const neg = el("span", "neg-side"), pos = el("span", "pos-side");
      const bar = el("span", "bar " + (t.weight < 0 ? "neg" : "pos"));
      bar.style.width = Math.max(2, Math.round(BAR_PX * Math.abs(t.weight) / top)) + "px";
      (t.weight < 0 ? neg : pos).appendChild(bar);
      row.append(neg, pos, el("span", "label", t.label + " " + t.terms.join(" · ")));
      wrap.appendChild(row);
    }
    return wrap;
  }

  function show(data) {
    results.replaceChildren();
    for (const h of data.hits) {
      const li = el("li", "hit");
      li.dataset.id = h.doc_id;
      li.appendChild(el("div", "title", h.title || h.doc_id));
      li.appendChild(el("div", "meta", h.doc_id + " · score " + fmt(h.score, 3) + " · BM25 " + fmt(h.term_score, 2) +
                                      " · topics " + fmt(h.topic_score, 3)));
      if (h.snippet) li.appendChild(el("div", "snippet", h.snippet));
      if (h.topics.length) li.appendChild(topicBars(h.topics));
      results.appendChild(li);
    }
    status.textContent = data.hits.length ? data.hits.length + " results for “" + data.query + "” (α = " +
      fmt(data.alpha, 2) + ")" : "No document matches “" + data.query + "”.";
    facts(data);
  }

  async function search() {
    const q = box.value.trim();
    const mine = ++asked;
    const url = new URL(window.location.href);
    if (!q) {
      results.replaceChildren();
      results.dataset.state = "idle";
      status.textContent = "";
      url.searchParams.delete("q");
      window.history.replaceState(null, "", url);
      return;
    }
    url.searchParams.set("q", q);
    window.history.replaceState(null, "", url);
    results.dataset.state = "busy";
    const params = new URLSearchParams({q: q, k: String(config.k)});
    if (config.topics) params.set("alpha", slider.value);
    try {
      const answer = await fetch("search?" + params.toString(), {headers: {Accept: "application/json"}});
      const data = await answer.json();
      if (mine !== asked) return;
      if (!answer.ok) throw new Error(data.error || answer.statusText);
      show(data);
      results.dataset.query = q;
      results.dataset.state = "done";
    } catch (err) {
      if (mine !== asked) return;
      results.replaceChildren();
      status.replaceChildren(el("span", "error", "The search failed: " + err.message));
      results.dataset.state = "error";
    }
  }

  function soon() {
    clearTimeout(timer);
    timer = setTimeout(search, 200);
  }

  slider.value = String(config.alpha);
  shown.textContent = fmt(config.alpha, 2);
  if (!config.topics) {  // no topic model: BM25 only
    slider.disabled = true;
    $("alpha-note").textContent = "this index has no topic model: BM25 only";
  }
  $("explore").hidden = !config.explorer;
  facts(config);
  form.addEventListener("submit", (e) => { e.preventDefault(); clearTimeout(timer); search(); });
  box.addEventListener("input", soon);
  slider.addEventListener("input", () => { shown.textContent = fmt(slider.value, 2); soon(); });
  const start = new URL(window.location.href).searchParams.get("q");
  if (start) { box.value = start; search(); }
  document.body.dataset.ready = "1";
})();
