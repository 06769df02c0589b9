// The interactive lesson page of `transformer-atlas lesson export --html`: draws each step's figure from the numbers
// of the step's run embedded in the page (src/app/viewmodel/lessonpage.cpp writes them), with the app's hover texts,
// layer and head switching, and the step's questions. No network, no library: one file a student opens offline.
"use strict";
(function () {
  const page = JSON.parse(document.getElementById("lesson-data").textContent);
  const SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹";
  const MINUS = "\u2212";

  // The app's formatNumber (src/app/viewmodel/viewinput.cpp): `significant` digits, no trailing zeros, a Unicode
  // minus, ×10ⁿ outside [10⁻³, 10⁵).
  function stripZeros(text) {
    if (text.indexOf(".") < 0) return text;
    return text.replace(/0+$/, "").replace(/\.$/, "");
  }
  function formatNumber(value, significant) {
    significant = Math.max(1, significant || 4);
    if (value === null || value === undefined) return MINUS + "∞";
    if (Number.isNaN(value)) return "NaN";
    if (!Number.isFinite(value)) return value < 0 ? MINUS + "∞" : "∞";
    if (value === 0) return "0";
    const magnitude = Math.abs(value);
    let text;
    if (magnitude < 1e-3 || magnitude >= 1e5) {
      const [mantissa, exponentText] = magnitude.toExponential(significant - 1).split("e");
      const exponent = parseInt(exponentText, 10);
      const power = String(Math.abs(exponent)).split("").map((c) => SUPERSCRIPTS[+c]).join("");
      text = stripZeros(mantissa) + "×10" + (exponent < 0 ? "⁻" : "") + power;
    } else {
      const before = magnitude >= 1 ? Math.floor(Math.log10(magnitude)) + 1 : 0;
      const zeros = magnitude < 1 ? -Math.floor(Math.log10(magnitude)) - 1 : 0;
      text = stripZeros(magnitude.toFixed(Math.max(0, significant - before + zeros)));
    }
    return value < 0 ? MINUS + text : text;
  }
  const percent = (p) => formatNumber(100 * p, 3) + "\u202F%";

  function el(tag, attributes, ...children) {
    const e = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) {
      if (key === "class") e.className = value;
      else if (key.startsWith("on")) e.addEventListener(key.slice(2), value);
      else e.setAttribute(key, value);
    }
    for (const child of children) e.append(child);
    return e;
  }
  const cssVar = (name) => getComputedStyle(document.body).getPropertyValue(name).trim();

  function lutColor(lut, t) {
    const i = !(t > 0) ? 0 : t >= 1 ? 255 : Math.round(t * 255);
    return lut[i];
  }
  // A hatch that shows on a cell of colour "#rrggbb": white on dark colours, black on light ones.
  function strokeOver(hex) {
    const v = parseInt(hex.slice(1), 16);
    const light = 0.299 * (v >> 16) + 0.587 * ((v >> 8) & 255) + 0.114 * (v & 255) > 128;
    return light ? "rgba(0,0,0,0.55)" : "rgba(255,255,255,0.7)";
  }
  function finiteRange(values) {
    let lo = Infinity, hi = -Infinity;
    for (const v of values) if (v !== null && Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
    if (lo > hi) return [0, 1];
    return lo === hi ? [lo - 0.5, hi + 0.5] : [lo, hi];
  }

  // A heat map on a canvas. cell(i, j) returns {color, masked, veiled}; hover(i, j) the readout's text. The canvas
  // carries its geometry (data-left, data-top, data-cell) so that a test can point at a cell.
  function heatmap(o) {
    const canvas = el("canvas", { class: "heatmap", role: "img", "aria-label": o.title || "heat map" });
    const measure = canvas.getContext("2d");
    const font = (o.fontSize || 13) + "px sans-serif";
    measure.font = font;
    const widest = (labels) => labels.reduce((w, s) => Math.max(w, measure.measureText(s).width), 0);
    const labelW = o.rowLabels ? Math.min(150, widest(o.rowLabels) + 10) : 4;
    const legendW = o.scale || o.swatches ? 96 : 0; // a colour bar with its two ends' values, or named swatches
    const cell = Math.max(3, Math.min(o.maxCell || 34, Math.floor((o.maxWidth - labelW - legendW - 10) / o.cols)));
    const vertical = o.colLabels && widest(o.colLabels) > cell - 4;
    const colLabelH = !o.colLabels ? 4 : vertical ? Math.min(110, widest(o.colLabels) + 10) : 22;
    const titleH = o.title ? 24 : 2;
    const width = labelW + cell * o.cols + 10 + legendW, height = titleH + cell * o.rows + colLabelH;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    Object.assign(canvas.dataset, { left: labelW, top: titleH, cell: cell, rows: o.rows, cols: o.cols });
    const labelEvery = (size) => Math.max(1, Math.ceil(16 / size));

    function draw(hi) {
      const ctx = canvas.getContext("2d");
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.clearRect(0, 0, width, height);
      ctx.font = font;
      ctx.fillStyle = cssVar("--text");
      if (o.title) {
        ctx.font = "bold " + font;
        ctx.textBaseline = "top";
        ctx.fillText(o.title, labelW, 3);
        ctx.font = font;
      }
      for (let i = 0; i < o.rows; ++i)
        for (let j = 0; j < o.cols; ++j) {
          const c = o.cell(i, j);
          const x = labelW + j * cell, y = titleH + i * cell;
          ctx.fillStyle = c.veiled ? cssVar("--veil") : c.color;
          ctx.fillRect(x, y, cell, cell);
          if (c.masked && cell >= 6) { // hatched, as the app draws −∞: never hue alone
            ctx.strokeStyle = "rgba(0,0,0,0.35)";
            ctx.lineWidth = 1;
            ctx.beginPath();
            ctx.moveTo(x, y + cell);
            ctx.lineTo(x + cell, y);
            ctx.stroke();
          }
          if (c.zero && cell >= 6) { // exactly 0 but allowed (sparsemax, entmax): the other diagonal, as the app
            ctx.strokeStyle = strokeOver(c.color);
            ctx.lineWidth = 1;
            ctx.beginPath();
            ctx.moveTo(x, y);
            ctx.lineTo(x + cell, y + cell);
            ctx.stroke();
          }
        }
      ctx.fillStyle = cssVar("--text");
      if (o.rowLabels) {
        ctx.textAlign = "right";
        ctx.textBaseline = "middle";
        const every = labelEvery(cell);
        for (let i = 0; i < o.rows; i += every)
          ctx.fillText(o.rowLabels[i], labelW - 5, titleH + (i + 0.5) * cell, labelW - 6);
      }
      if (o.colLabels) {
        const every = labelEvery(vertical ? cell : cell / 2);
        for (let j = 0; j < o.cols; j += every) {
          const x = labelW + (j + 0.5) * cell, y = titleH + o.rows * cell + 4;
          ctx.save();
          if (vertical) {
            ctx.translate(x, y);
            ctx.rotate(-Math.PI / 2);
            ctx.textAlign = "right";
            ctx.textBaseline = "middle";
            ctx.fillText(o.colLabels[j], 0, 0, colLabelH - 6);
          } else {
            ctx.textAlign = "center";
            ctx.textBaseline = "top";
            ctx.fillText(o.colLabels[j], x, y);
          }
          ctx.restore();
        }
      }
      if (o.scale) {
        const x = labelW + cell * o.cols + 12, top = titleH, span = Math.max(40, cell * o.rows);
        for (let k = 0; k < span; ++k) {
          ctx.fillStyle = o.scale.lut[Math.round((1 - k / (span - 1)) * 255)];
          ctx.fillRect(x, top + k, 12, 1);
        }
        ctx.fillStyle = cssVar("--text");
        ctx.textAlign = "left";
        ctx.textBaseline = "top";
        ctx.fillText(formatNumber(o.scale.hi), x + 16, top, legendW - 20);
        ctx.textBaseline = "bottom";
        ctx.fillText(formatNumber(o.scale.lo), x + 16, top + span, legendW - 20);
      }
      if (o.swatches) {
        const x = labelW + cell * o.cols + 12;
        ctx.textAlign = "left";
        ctx.textBaseline = "middle";
        o.swatches.forEach(([color, label], k) => {
          const y = titleH + k * 22;
          ctx.fillStyle = color;
          ctx.fillRect(x, y, 14, 14);
          ctx.strokeStyle = cssVar("--line");
          ctx.strokeRect(x + 0.5, y + 0.5, 13, 13);
          ctx.fillStyle = cssVar("--text");
          ctx.fillText(label, x + 20, y + 7, legendW - 24);
        });
      }
      if (hi) {
        ctx.strokeStyle = cssVar("--highlight");
        ctx.lineWidth = 2;
        ctx.strokeRect(labelW + hi[1] * cell + 1, titleH + hi[0] * cell + 1, cell - 2, cell - 2);
      }
    }
    draw(null);
    canvas.addEventListener("mousemove", (e) => {
      const r = canvas.getBoundingClientRect();
      const j = Math.floor((e.clientX - r.left - labelW) / cell), i = Math.floor((e.clientY - r.top - titleH) / cell);
      if (i < 0 || j < 0 || i >= o.rows || j >= o.cols) return;
      draw([i, j]);
      o.hover(i, j);
    });
    canvas.addEventListener("mouseleave", () => draw(null));
    return canvas;
  }

  // A row of buttons choosing one of `count` values; `enabled(k)` says which exist in the page.
  function chooser(label, count, current, enabled, onChoose, names) {
    const row = el("div", { class: "chooser", role: "group", "aria-label": label }, el("span", {}, label));
    for (let k = 0; k < count; ++k) {
      const b = el("button", { type: "button", "data-value": k, title: label + " " + (names ? names[k] : k) },
        names ? names[k] : String(k));
      if (k === current) b.classList.add("chosen");
      if (!enabled(k)) { b.disabled = true; b.title += ": not traced at this step"; }
      b.addEventListener("click", () => onChoose(k));
      row.append(b);
    }
    return row;
  }

  function cellPrefix(fig, i, j) {
    return "query '" + fig.queries[i] + "' (#" + i + ") \u2192 key '" + fig.keys[j] + "' (#" + j + ")";
  }

  // attention, mask and heads: one head's matrix, its three stages, or every head of a layer.
  function attentionFigure(box, fig, step) {
    const readout = box.querySelector(".readout");
    const state = { layer: fig.layer, head: fig.head };
    const lut = fig.lut, masked = fig.maskedColor;
    const T = fig.queries.length, S = fig.keys.length;
    const at = (i, j) => i * S + j;
    const veiled = (layer, head, i) => step.questions.some((q) => q.kind === "predict" && !q.revealed &&
      q.layer === layer && q.head === head && q.query === i);
    const isMasked = (layer, head, i, j) => fig.masked[layer] !== null && fig.masked[layer][head][at(i, j)] === "1";
    // Sparsemax and entmax give allowed keys exactly 0: drawn and named apart from the mask.
    const isZero = (layer, head, i, j) => Boolean(fig.exactZeros) && !isMasked(layer, head, i, j) &&
      fig.probs[layer] !== null && fig.probs[layer][head][at(i, j)] === 0;
    const notComputed = (what) => el("p", { class: "note" }, what + " is not computed yet at this step: the app's " +
      "stepper stopped before it.");

    function probabilityText(layer, head, i, j) {
      if (veiled(layer, head, i)) return cellPrefix(fig, i, j) + ": hidden until Reveal";
      if (isMasked(layer, head, i, j)) {
        return cellPrefix(fig, i, j) + ": " + (fig.pattern ? "outside the kernel's pattern (weight 0)"
          : "masked (" + MINUS + "∞ before softmax)");
      }
      if (isZero(layer, head, i, j)) {
        return cellPrefix(fig, i, j) + ": probability exactly 0, not masked: its score is below " + fig.exactZeros +
          "'s threshold \u03C4";
      }
      const scores = fig.scores[layer];
      return cellPrefix(fig, i, j) + ":" + (scores ? " score " + formatNumber(scores[head][at(i, j)]) + "," : "") +
        " probability " + formatNumber(fig.probs[layer][head][at(i, j)]);
    }
    function maskText(layer, head, i, j) {
      if (fig.pattern)
        return cellPrefix(fig, i, j) + (isMasked(layer, head, i, j) ? ": outside the kernel's pattern" : ": in the kernel's pattern");
      if (!isMasked(layer, head, i, j)) {
        const s = fig.scores[layer];
        return cellPrefix(fig, i, j) + ": allowed (M = 0" + (s ? ", S\u2032 = " + formatNumber(s[head][at(i, j)]) : "") + ")";
      }
      const why = fig.keyPadding.includes(j) ? (fig.cross ? " (the source token is padding)" : " (the key is padding)")
        : fig.causal && j > i ? " (the key is a future token)" : "";
      return cellPrefix(fig, i, j) + ": not allowed (M = " + MINUS + "∞)" + why;
    }
    function probabilityMap(layer, head, opts, prefix) {
      if (!fig.probs[layer]) return notComputed("P = softmax(S + M)");
      const p = fig.probs[layer][head];
      const [lo, hi] = finiteRange(p);
      return heatmap(Object.assign({
        rows: T, cols: S, rowLabels: fig.queries, colLabels: fig.keys, scale: { lut: lut, lo: lo, hi: hi },
        cell: (i, j) => ({ color: isMasked(layer, head, i, j) ? masked : lutColor(lut, (p[at(i, j)] - lo) / (hi - lo)),
          masked: isMasked(layer, head, i, j), zero: isZero(layer, head, i, j), veiled: veiled(layer, head, i) }),
        hover: (i, j) => { readout.textContent = (prefix || "") + probabilityText(layer, head, i, j); },
      }, opts));
    }

    function render() {
      const controls = box.querySelector(".controls"), panels = box.querySelector(".panels");
      controls.replaceChildren();
      panels.replaceChildren();
      const traced = (l) => Boolean(fig.probs[l] || fig.scores[l] || fig.masked[l]);
      if (fig.probs.some((p, l) => l !== state.layer && traced(l)))
        controls.append(chooser("Layer", fig.layers, state.layer, traced, (l) => { state.layer = l; render(); }));
      if (fig.draw !== "heads" && fig.heads > 1)
        controls.append(chooser("Head", fig.heads, state.head, () => true, (h) => { state.head = h; render(); }));
      const width = panels.clientWidth || 1000;
      const where = (fig.site ? fig.site + ", " : "") + "layer " + state.layer;
      if (fig.draw === "attention") {
        panels.append(probabilityMap(state.layer, state.head,
          { maxWidth: width, title: where + ", head " + state.head + ": softmax(S)" }));
      } else if (fig.draw === "mask") {
        const layer = state.layer, head = state.head, s = fig.scores[layer];
        const third = Math.max(220, Math.floor(width / 3) - 8);
        if (s) {
          const [lo, hi] = finiteRange(s[head]);
          const bound = Math.max(Math.abs(lo), Math.abs(hi));
          panels.append(heatmap({ rows: T, cols: S, rowLabels: fig.queries, colLabels: fig.keys, maxWidth: third,
            title: where + ", head " + head + ": scores S = QK\u1D40/\u221Ad", scale: { lut: page.diverging, lo: -bound, hi: bound },
            cell: (i, j) => ({ color: lutColor(page.diverging, (s[head][at(i, j)] + bound) / (2 * bound)) }),
            hover: (i, j) => { readout.textContent = cellPrefix(fig, i, j) + ": score S = " + formatNumber(s[head][at(i, j)]); } }));
        }
        if (fig.masked[layer]) panels.append(heatmap({ rows: T, cols: S, rowLabels: fig.queries, colLabels: fig.keys, maxWidth: third,
          title: fig.pattern ? "The kernel's pattern" : "Mask M (0 or \u2212\u221E)",
          swatches: [[cssVar("--allowed"), fig.pattern ? "attended" : "0"], [masked, fig.pattern ? "skipped" : MINUS + "∞"]],
          cell: (i, j) => ({ color: isMasked(layer, head, i, j) ? masked : cssVar("--allowed"), masked: isMasked(layer, head, i, j) }),
          hover: (i, j) => { readout.textContent = maskText(layer, head, i, j); } }));
        panels.append(probabilityMap(layer, head, { maxWidth: third, title: "P = softmax(S + M)" }));
      } else {
        const columns = Math.min(fig.heads, Math.max(1, Math.floor(width / 230)));
        const side = Math.floor(width / columns) - 12;
        for (let h = 0; h < fig.heads; ++h) {
          panels.append(probabilityMap(state.layer, h, { maxWidth: side, maxCell: 14, rowLabels: null, colLabels: null,
            title: "head " + h, scale: null }, "Layer " + state.layer + ", head " + h + " \u00B7 "));
        }
      }
    }
    box.redraw = render;
    render();
  }

  function tensorFigure(box, fig) {
    const readout = box.querySelector(".readout");
    let slice = fig.slice;
    const perSlice = fig.rows * fig.cols;
    // The colours span the whole tensor, as in the app, so that slices can be compared by eye.
    const [lo, hi] = finiteRange(fig.values);
    const bound = Math.max(Math.abs(lo), Math.abs(hi)) || 1;
    function render() {
      const controls = box.querySelector(".controls"), panels = box.querySelector(".panels");
      controls.replaceChildren();
      panels.replaceChildren();
      if (fig.slices > 1)
        controls.append(chooser(fig.name.includes(".attn.") ? "Head" : "Index", fig.slices, slice, () => true, (k) => { slice = k; render(); }));
      const values = fig.values.slice(slice * perSlice, (slice + 1) * perSlice);
      const index = (i, j) => (fig.slices > 1 ? slice + ", " : "") + (fig.rows > 1 || fig.slices > 1 ? i + ", " : "") + j;
      panels.append(heatmap({ rows: fig.rows, cols: fig.cols, rowLabels: fig.rowLabels,
        colLabels: fig.cols <= 64 ? fig.colLabels : null, maxWidth: panels.clientWidth || 1000, maxCell: 28,
        title: fig.name + " " + fig.shape, scale: { lut: page.diverging, lo: -bound, hi: bound },
        cell: (i, j) => {
          const v = values[i * fig.cols + j];
          return v === null ? { color: page.masked, masked: true } : { color: lutColor(page.diverging, (v + bound) / (2 * bound)) };
        },
        hover: (i, j) => {
          const v = values[i * fig.cols + j];
          readout.textContent = fig.name + "[" + index(i, j) + "] = " + (v === null ? MINUS + "∞ (masked)" : formatNumber(v, 7)) +
            (fig.rows === fig.rowLabels.length && fig.rowLabels[i] !== String(i) ? "  (token '" + fig.rowLabels[i] + "')" : "");
        } }));
      if (fig.formula) panels.append(el("p", { class: "formula" }, fig.formula));
    }
    box.redraw = render;
    render();
  }

  function nextTokenFigure(box, fig) {
    const readout = box.querySelector(".readout");
    let position = fig.position;
    function render() {
      const controls = box.querySelector(".controls"), panels = box.querySelector(".panels");
      controls.replaceChildren(chooser("Position", fig.tokens.length, position, () => true,
        (t) => { position = t; render(); }, fig.tokens.map((s, t) => t + " " + s)));
      const list = el("div", { class: "bars" }, el("p", { class: "caption" }, "After '" + fig.tokens[position] +
        "' (#" + position + "), the model's next token: softmax(z), the ten most probable"));
      panels.replaceChildren(list);
      const bars = fig.bars[position];
      const top = bars.length ? bars[0].p : 1;
      for (const bar of bars) {
        const row = el("div", { class: "bar", "data-id": bar.id },
          el("span", { class: "bar-label" }, bar.token),
          el("span", { class: "bar-track" }, el("span", { class: "bar-fill", style: "width:" + (100 * bar.p / top) + "%" })),
          el("span", { class: "bar-value" }, percent(bar.p)));
        row.addEventListener("mousemove", () => {
          readout.textContent = "'" + bar.token + "' (#" + bar.id + "): p = " + formatNumber(bar.p) + " (" + percent(bar.p) + ")";
        });
        list.append(row);
      }
    }
    box.redraw = render;
    render();
  }

  function logitLensFigure(box, fig) {
    const readout = box.querySelector(".readout");
    const panels = box.querySelector(".panels");
    const table = el("table", { class: "lens" });
    const head = el("tr", {}, el("th", {}, "the stream after"));
    fig.tokens.forEach((t, i) => head.append(el("th", {}, i + " " + t)));
    table.append(head);
    for (let d = fig.rows.length - 1; d >= 0; --d) { // the last block on top, as the app draws it
      const row = fig.rows[d];
      const tr = el("tr", {}, el("th", {}, row.label));
      row.cells.forEach((cell, t) => {
        const [token, p] = cell.top[0];
        const td = el("td", { style: "background:" + lutColor(fig.lut, p) + ";color:" + (p > 0.6 ? "#000" : "#fff"),
          "data-row": d, "data-position": t }, token);
        td.addEventListener("mousemove", () => {
          readout.textContent = row.label + ", position " + t + " '" + fig.tokens[t] + "': " +
            cell.top.map(([tok, q], k) => (k + 1) + ". '" + tok + "' " + percent(q)).join("  ") +
            "  (entropy " + formatNumber(cell.entropy) + " nats)";
        });
        tr.append(td);
      });
      table.append(tr);
    }
    panels.append(table);
  }

  function questionBlock(step, figureBox, q, index) {
    const box = el("div", { class: "question" },
      el("p", {}, el("b", {}, q.kind === "choose" ? "Question. " : "Predict. "), q.prompt));
    const feedback = el("p", { class: "feedback", "aria-live": "polite" });
    if (q.kind === "choose") {
      const name = "s" + step.index + "q" + index;
      const inputs = q.choices.map((choice, c) => {
        const input = el("input", { type: q.multiple ? "checkbox" : "radio", name: name, value: c });
        box.append(el("label", { class: "choice" }, input, " " + choice));
        return input;
      });
      if (!q.correct) {
        box.append(el("p", { class: "note" }, "Discuss it in class: this copy leaves the answers out."));
        return box;
      }
      box.append(el("button", { type: "button", class: "check", onclick: () => {
        const chosen = inputs.filter((i) => i.checked).map((i) => +i.value);
        const right = chosen.length === q.correct.length && q.correct.every((c) => chosen.includes(c));
        feedback.replaceChildren();
        feedback.append(el("b", {}, right ? "Right." : "Not quite"),
          (right ? " " : ": the answer is " + q.correct.map((c) => q.choices[c]).join(" and ") + ". ") + q.explanation);
        feedback.className = "feedback " + (right ? "right" : "wrong");
      } }, "Check"), feedback);
      return box;
    }
    let guess = -1;
    box.append(el("p", { class: "hint" }, "Click the key you expect query " + q.query + " to attend to most, then Reveal."));
    const chips = el("div", { class: "chips" });
    q.keys.forEach((label, k) => {
      chips.append(el("button", { type: "button", class: "chip", "data-key": k, onclick: (e) => {
        guess = k;
        chips.querySelectorAll(".chip").forEach((c) => c.classList.toggle("chosen", c === e.currentTarget));
      } }, k + " " + label));
    });
    box.append(chips, el("button", { type: "button", class: "reveal", onclick: () => {
      q.revealed = true;
      const weight = (k) => (q.row[k] === null ? 0 : q.row[k]).toFixed(2);
      const verdict = guess < 0 ? "" : guess === q.answer ? "Right. "
        : "Not this time: you chose " + q.keys[guess] + " (weight " + weight(guess) + "). ";
      feedback.textContent = verdict + "Query " + q.query + " attends most to key " + q.answer + " " + q.keys[q.answer] +
        " (weight " + weight(q.answer) + "). " + (q.explanation || "");
      chips.querySelectorAll(".chip").forEach((c) => c.classList.toggle("answer", +c.dataset.key === q.answer));
      if (figureBox && figureBox.redraw) figureBox.redraw();
    } }, "Reveal"), feedback);
    return box;
  }

  const draw = { attention: attentionFigure, mask: attentionFigure, heads: attentionFigure, tensor: tensorFigure,
    "next-token": nextTokenFigure, "logit-lens": logitLensFigure };
  page.steps.forEach((step, index) => {
    step.index = index;
    const section = document.getElementById("step-" + (index + 1));
    const figureBox = section.querySelector(".figure[data-draw]");
    if (step.figure && figureBox) draw[step.figure.draw](figureBox, step.figure, step);
    if (step.spec) {
      section.insertBefore(el("details", { class: "spec" },
        el("summary", {}, "This step's view spec (in the app: copy it, then File \u25B8 Paste View Spec, Ctrl+Shift+V)"),
        el("pre", {}, JSON.stringify(step.spec, null, 2))), section.querySelector(".questions"));
    }
    const questions = section.querySelector(".questions");
    step.questions.forEach((q, k) => questions.append(questionBlock(step, figureBox, q, k)));
  });
  document.body.dataset.ready = "true";
})();
