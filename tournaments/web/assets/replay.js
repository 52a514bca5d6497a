/* Tavolo's replay viewer (docs/replay-viewer.md). It reads the record lines embedded in the
   page (their schema, and which families write each: docs/records.md, "What the views read")
   and shows any point of any game in them. A card the rules keep face down at that point is
   drawn as an empty back: its name is never put in the page. */
(() => {
  "use strict";
  const FORMAT = "tavolo-record/1";
  const RANKS = "32AKQJ7654";
  const SUITS = "DCSB";
  const STOPS = new Set(["deal", "trick", "score", "redeal", "result"]);
  const CARD = /(?<![0-9A-Za-z])[32AKQJ7654][DCSB](?![0-9A-Za-z])/g;
  const $ = (id) => document.getElementById(id);

  class Problem extends Error {
    constructor(line, message) {
      super(line ? `record line ${line}: ${message}` : message);
    }
  }

  let games = [];
  let gi = -1;
  let step = 0;
  let showAll = false;
  let hashTimer = 0;

  // -- building the page ------------------------------------------------------------------

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else node.setAttribute(key, String(value));
    }
    for (const kid of kids.flat(2)) {
      if (kid !== null && kid !== undefined && kid !== false) node.append(kid);
    }
    return node;
  }

  const cardId = (c) => SUITS.indexOf(c[1]) * 10 + RANKS.indexOf(c[0]);
  const byCard = (a, b) => cardId(a) - cardId(b);
  const zeros = (n) => new Array(n).fill(0);
  const back = (cls) => el("span", { class: "card back" + (cls ? " " + cls : ""), title: "face down" });

  /* The one way a card reaches the page: a card hidden at this point becomes a back. */
  function face(st, c, cls) {
    if (st.hidden.has(c)) return back(cls);
    return el("span", { class: `card suit-${c[1]}` + (cls ? " " + cls : ""), "data-card": c }, c);
  }

  const mask = (st, text) => String(text).replace(CARD, (c) => (st.hidden.has(c) ? "(a face-down card)" : c));

  // -- reading the record -----------------------------------------------------------------

  function load() {
    let raw;
    try {
      raw = JSON.parse($("tavolo-record").textContent);
    } catch (e) {
      throw new Problem(0, "the record embedded in the page is not JSON: " + e.message);
    }
    if (!Array.isArray(raw) || !raw.every((t) => typeof t === "string")) {
      throw new Problem(0, "the record embedded in the page is not a list of lines");
    }
    if (!raw.length) throw new Problem(0, "the record is empty: it has no lines");
    const out = [];
    raw.forEach((text, i) => {
      const n = i + 1;
      let o;
      try {
        o = JSON.parse(text);
      } catch (e) {
        throw new Problem(n, `not JSON (${e.message})`);
      }
      if (o === null || typeof o !== "object" || Array.isArray(o) || typeof o.type !== "string") {
        throw new Problem(n, 'not a record line: each line is a JSON object with a "type"');
      }
      if (o.type === "game") {
        if (o.format !== FORMAT) {
          throw new Problem(n, `the format is ${JSON.stringify(o.format)}; this viewer reads ${FORMAT} (docs/records.md) only`);
        }
        const r = o.rules;
        if (!r || typeof r !== "object" || !Array.isArray(r.card_values) || r.card_values.length !== 10) {
          throw new Problem(n, "the game line has no rules.card_values (10 numbers)");
        }
        out.push({ h: o, n, rules: r, lines: [], deals: [], stops: [], result: null, resultAt: null });
      } else if (!out.length) {
        throw new Problem(n, `a record starts with a "game" line, not "${o.type}"`);
      }
      out[out.length - 1].lines.push({ o, n });
    });
    out.forEach(index);
    return out;
  }

  function index(g) {
    let deal = null;
    let totals = null;
    g.lines.forEach(({ o, n }, i) => {
      const t = o.type;
      if (t === "deal") {
        if (!Array.isArray(o.hands) || !o.hands.every(Array.isArray)) throw new Problem(n, "a deal line without its hands");
        deal = { number: o.deal, start: i, end: null, tricks: [], o, before: totals };
        g.deals.push(deal);
      } else if (i > 0 && !deal) {
        throw new Problem(n, `a "${t}" line before the game's first "deal" line`);
      }
      if (t === "trick") deal.tricks.push(i);
      if ((t === "score" || t === "redeal") && deal.end === null) {
        deal.end = i;
        if (Array.isArray(o.totals)) totals = o.totals;
      }
      if (t === "result") {
        g.result = o;
        g.resultAt = i;
        if (deal.end === null) deal.end = i;
      }
      if (STOPS.has(t)) g.stops.push(i);
    });
    g.seats = Array.isArray(g.h.seats) ? g.h.seats.length : g.deals.length ? g.deals[0].o.hands.length : 0;
    const sides = g.result ? g.result.totals : totals;
    g.sides = Array.isArray(sides) && sides.length ? sides.length : g.seats;
    g.family = FAMILIES[g.h.game] || TRESSETTE;
    g.cala = g.family === CALABRESELLA;
  }

  // -- names --------------------------------------------------------------------------------

  const named = (g) => Array.isArray(g.h.seats);
  const name = (g, s) => (named(g) && g.h.seats[s] !== null ? String(g.h.seats[s]) : `seat ${s}`);
  const who = (g, s) => (named(g) ? `${name(g, s)} (seat ${s})` : `seat ${s}`);
  const sideOf = (g, s) => s % g.sides;

  function sideName(g, k) {
    if (g.sides >= g.seats) return who(g, k);
    const seats = [];
    for (let s = k; s < g.seats; s += g.sides) seats.push(s);
    const names = [...new Set(seats.map((s) => name(g, s)))];
    return `side ${k} (${named(g) ? names.join(" & ") : "seats " + seats.join(", ")})`;
  }

  function resultText(g, o) {
    const winner = o.winner === null ? "a draw" : `${sideName(g, o.winner)} wins`;
    return `Game over (${o.termination}): ${winner}; totals ${o.totals.join(" – ")} after ${o.deals} deal${o.deals === 1 ? "" : "s"}.`;
  }

  // -- the state at one step ----------------------------------------------------------------

  function dealAt(g, i) {
    let found = null;
    for (const d of g.deals) if (d.start <= i) found = d;
    return found;
  }

  function stateAt(g, i) {
    const d = dealAt(g, i);
    const st = { g, i, d, log: [], hidden: new Set() };
    if (!d) return st;
    Object.assign(st, {
      played: new Map(), trick: [], trickNo: 0, winner: null, done: false,
      thirds: zeros(g.cala ? 2 : g.sides), declared: zeros(g.sides), decl: [],
      drawn: d.o.hands.map(() => []), drawnCount: 0,
      bids: [], contract: null, soloist: null, call: null, gives: [], discards: [], split: null,
      score: null, result: null, redeal: false, ended: d.end !== null && i >= d.end,
    });
    st.open = !(showAll || st.ended);
    for (let k = d.start; k <= i; k++) {
      const { o, n } = g.lines[k];
      try {
        apply(st, o, k, n);
      } catch (e) {
        if (e instanceof Problem) throw e;
        throw new Problem(n, `cannot be shown (${e.message})`);
      }
    }
    st.hidden = hiddenCards(st);
    return st;
  }

  function apply(st, o, k, n) {
    const g = st.g;
    const log = (...items) => st.log.push({ k, n, type: o.type, items });
    const w = (s) => who(g, s);
    switch (o.type) {
      case "deal":
        log(`Deal ${o.deal}: ${w(o.dealer)} deals.`);
        break;
      case "declare":
        st.decl.push({ seat: o.seat, declaration: o.declaration, cards: o.cards, points: o.points, trick: st.trickNo + 1 });
        st.declared[sideOf(g, o.seat)] += o.points;
        log(`${w(o.seat)} declares ${o.declaration} `, o.cards.map((c) => ({ card: c })), ` (+${o.points}).`);
        break;
      case "end-declarations":
        log(`${w(o.seat)} ends the declarations.`);
        break;
      case "play":
        if (st.done) Object.assign(st, { trick: [], done: false, winner: null });
        st.trick.push({ seat: o.seat, card: o.card, signal: o.signal });
        st.played.set(o.card, o.seat);
        log(`${w(o.seat)} plays `, { card: o.card }, o.signal ? ` ${o.signal}` : "", ".");
        break;
      case "trick": {
        Object.assign(st, { done: true, winner: o.winner, trickNo: o.trick });
        const side = g.cala ? (o.winner === st.soloist ? 0 : 1) : sideOf(g, o.winner);
        st.thirds[side] += st.trick.reduce((sum, p) => sum + g.rules.card_values[RANKS.indexOf(p.card[0])], 0);
        log(`Trick ${o.trick} to ${w(o.winner)}.`);
        break;
      }
      case "draw":
        st.drawn[o.seat].push(o.card);
        st.drawnCount += 1;
        log(`${w(o.seat)} draws `, { card: o.card }, " from the stock.");
        break;
      case "call-out":
        log(`${w(o.seat)} calls out, claiming ${o.claimed}: ${o.correct ? "right, the side wins" : "wrong, the side loses"}.`);
        break;
      case "bid":
        st.bids.push(o);
        log(`${w(o.seat)} ${o.bid === "pass" ? "passes" : "bids " + o.bid}.`);
        break;
      case "contract":
        Object.assign(st, { contract: o.contract, soloist: o.soloist });
        log(`${w(o.soloist)} wins the auction with ${o.contract}; ${monteNote(st)}.`);
        break;
      case "call":
        st.call = { seat: o.seat, card: o.card, holder: o.holder };
        log(`${w(o.seat)} calls `, { card: o.card }, o.holder === null ? ": it is in the monte." : `: ${w(o.holder)} hands it over.`);
        break;
      case "give":
        st.gives.push({ seat: o.seat, card: o.card });
        log(`${w(o.seat)} gives `, st.open ? "a card face down" : { card: o.card }, st.call && st.call.holder !== null ? ` to ${w(st.call.holder)}.` : ".");
        break;
      case "discard":
        st.discards.push({ seat: o.seat, card: o.card });
        log(`${w(o.seat)} discards `, st.open ? "a card face down" : { card: o.card }, ".");
        break;
      case "split":
        st.split = { seat: o.seat, take: o.take };
        log(`${w(o.seat)} takes `, o.take.length ? o.take.map((c) => ({ card: c })) : "none", ` of the monte; ${w(otherDefender(st, o.seat))} the rest.`);
        break;
      case "redeal":
        st.redeal = true;
        log("Everyone passed: the same dealer deals again.");
        break;
      case "score":
        st.score = o;
        log(g.family.scored(g, o));
        break;
      case "forfeit":
        log({ alert: `${w(o.seat)} forfeits the game (${o.reason}): ` }, { free: o.detail });
        break;
      case "rejected":
        log({ alert: `${w(o.seat)}: action ${o.action_id} refused (${o.reason}).` });
        break;
      case "incident":
        log({ alert: `Incident (${o.kind}) at ${w(o.seat)}: ` }, { free: o.detail });
        break;
      case "result":
        st.result = o;
        log(resultText(g, o));
        break;
      default:
        log(`A "${o.type}" line.`);
    }
  }

  // -- Calabresella's monte and exchanges -----------------------------------------------------

  /* The active seats after ``s`` in playing order (the dealer sits out with four). */
  function after(st, s) {
    const hands = st.d.o.hands;
    const out = [];
    for (let j = 1; j < hands.length; j++) {
      const t = (s + j) % hands.length;
      if (hands[t].length) out.push(t);
    }
    return out;
  }

  const otherDefender = (st, s) => after(st, st.soloist).find((t) => t !== s);

  function monteNote(st) {
    const g = st.g;
    const [first, second] = st.soloist === null ? [] : after(st, st.soloist);
    switch (st.contract) {
      case null:
        return "face down";
      case "solo":
      case "chiamo":
        return `the soloist takes the monte face down${st.contract === "chiamo" ? " after the call" : ""}`;
      case "solissimo":
        return "the monte stays aside face down and goes to the last trick's winner";
      case "dividete":
        return `${who(g, first)} and ${who(g, second)} take two monte cards each, face down`;
      case "scegliete":
        return st.split ? `${who(g, st.split.seat)} took ${st.split.take.length} of the monte, shown face up` : `the monte is shown face up and ${who(g, first)} splits it`;
      default:
        return String(st.contract);
    }
  }

  /* What each seat received from the monte or another seat, as the contract moves it
     (docs/rules.md; no record line says where the monte goes). */
  function received(st) {
    const out = st.d.o.hands.map(() => []);
    if (!st.g.cala || st.contract === null) return out;
    const monte = (st.d.o.monte || []).slice().sort(byCard);
    const to = (s, cards, pub) => cards.forEach((card) => out[s].push({ card, pub }));
    const [first, second] = after(st, st.soloist);
    switch (st.contract) {
      case "solo":
        to(st.soloist, monte, false);
        break;
      case "chiamo":
        if (!st.call) break;
        if (st.call.holder === null) to(st.soloist, monte, false);
        else {
          to(st.soloist, [st.call.card], true);
          if (st.gives.length) {
            to(st.call.holder, st.gives.map((x) => x.card), false);
            to(st.soloist, monte, false);
          }
        }
        break;
      case "dividete":
        to(first, monte.slice(0, 2), false);
        to(second, monte.slice(2), false);
        break;
      case "scegliete":
        if (st.split) {
          to(st.split.seat, st.split.take, true);
          to(otherDefender(st, st.split.seat), monte.filter((c) => !st.split.take.includes(c)), true);
        }
        break;
      default:
    }
    return out;
  }

  function hiddenCards(st) {
    const hidden = new Set();
    const o = st.d.o;
    if (showAll) return hidden;
    if (!st.ended) {
      // Scegliete shows the monte at the split; otherwise a monte card shows when played.
      if (st.g.cala && !st.split) for (const c of o.monte || []) if (!st.played.has(c)) hidden.add(c);
      for (const c of o.widow || []) hidden.add(c);
    }
    // Briscola's trump lies face up under the stock, drawn last.
    for (const c of (o.stock || []).slice(st.drawnCount)) if (c !== o.trump) hidden.add(c);
    return hidden;
  }

  // -- drawing one step -----------------------------------------------------------------------

  function render() {
    const g = games[gi];
    const st = stateAt(g, step);
    const last = g.lines.length - 1;
    for (const input of [$("step-slider"), $("step-input")]) {
      input.max = String(last);
      input.value = String(step);
    }
    const line = g.lines[step];
    const counter = $("step-counter");
    counter.textContent = `step ${step} of ${last}` + (st.d ? ` · deal ${st.d.number}` : "") + ` · record line ${line.n} (${line.o.type})`;
    Object.assign(counter.dataset, { step, line: line.n, game: gi + 1, deal: st.d ? st.d.number : "" });
    $("show-all").checked = showAll;
    seats(st);
    extras(st);
    auction(st);
    points(st);
    dealScore(st);
    totals(st);
    const result = $("result");
    result.hidden = !st.result;
    result.textContent = st.result ? resultText(g, st.result) : "";
    const log = $("log");
    log.replaceChildren(...st.log.map((e) => el("li", { "data-line": e.n, "data-type": e.type, class: e.k === step ? "current" : null }, el("span", { class: "ln" }, String(e.n)), e.items.map((x) => item(st, x)))));
    log.scrollTop = log.scrollHeight;
    // The stop the game is at or heading for: the trick in progress, say.
    let current = null;
    for (const b of $("deals-nav").querySelectorAll("button")) {
      b.classList.remove("current");
      if (!current && +b.dataset.step >= step) current = b;
    }
    if (current) current.classList.add("current");
  }

  function item(st, x) {
    if (typeof x === "string") return x;
    if (Array.isArray(x)) return x.map((y) => item(st, y));
    if (x.card) return face(st, x.card, "mini");
    if (x.alert) return el("strong", { class: "alert" }, x.alert);
    return mask(st, x.free);
  }

  function trickText(st) {
    const g = st.g;
    if (st.done) return `Trick ${st.trickNo}: won by ${who(g, st.winner)}.`;
    if (st.trick.length) return `Trick ${st.trickNo + 1}: led by ${who(g, st.trick[0].seat)}.`;
    if (st.redeal) return "No contract: the deal is played again.";
    if (st.g.cala && st.soloist === null) return "The auction.";
    return st.trickNo ? `Trick ${st.trickNo + 1}.` : "No card played yet.";
  }

  function seats(st) {
    const g = st.g;
    const table = $("seats");
    table.replaceChildren();
    if (!st.d) {
      table.append(el("caption", { id: "trick-info" }, "Before the first deal."));
      return;
    }
    const o = st.d.o;
    const got = received(st);
    const now = st.done ? st.trickNo : st.trickNo + 1;
    table.append(el("caption", { id: "trick-info", "data-trick": st.trick.length ? now : null, "data-winner": st.done ? st.winner : null }, trickText(st)));
    o.hands.forEach((hand, s) => {
      const mine = (list) => list.filter((x) => x.seat === s);
      const played = (c) => st.played.get(c) === s;
      const marks = (c) => {
        const m = [];
        if (played(c)) m.push("played");
        if (st.call && st.call.holder === s && st.call.card === c) m.push("handed");
        if (!st.open && mine(st.discards).some((x) => x.card === c)) m.push("discarded");
        if (!st.open && mine(st.gives).some((x) => x.card === c)) m.push("given");
        if (mine(st.decl).some((x) => x.cards.includes(c))) m.push("declared");
        if (o.trump === c) m.push("trump");
        return m.join(" ");
      };
      const handCell = el("td", { id: `hand-${s}`, class: "hand" }, hand.map((c) => face(st, c, marks(c))));
      if (got[s].length) {
        handCell.append(el("span", { class: "got", id: `received-${s}` }, "+ ", got[s].map((r) => (r.pub || !st.open || played(r.card) ? face(st, r.card, "received" + (played(r.card) ? " played" : "")) : back("received")))));
      }
      if (st.drawn[s].length) {
        handCell.append(el("span", { class: "got", id: `drawn-${s}` }, "+ ", st.drawn[s].map((c) => face(st, c, "drawn" + (played(c) ? " played" : "")))));
      }
      const notes = [];
      for (const x of mine(st.decl)) notes.push(el("span", { class: "declaration", "data-declaration": x.declaration }, `${x.declaration} +${x.points}`));
      const discards = mine(st.discards);
      if (discards.length) notes.push(el("span", { class: "discards", id: `discards-${s}` }, "discarded: ", discards.map((x) => (st.open ? back() : face(st, x.card)))));
      if (notes.length) handCell.append(el("div", { class: "notes" }, notes));
      const play = st.trick.find((p) => p.seat === s);
      const decls = mine(st.decl).filter((x) => x.trick === now);
      const slot = el(
        "td",
        { id: `play-${s}`, class: "trick-slot" + (st.done && st.winner === s ? " winner" : "") + (st.trick.length && st.trick[0].seat === s ? " lead" : "") },
        decls.map((x) => el("span", { class: "declaration", "data-declaration": x.declaration }, `${x.declaration} +${x.points}`)),
        play ? face(st, play.card, "in-trick") : null,
        play && play.signal ? el("span", { class: "signal", "data-signal": play.signal }, play.signal) : null,
      );
      const badges = [];
      if (o.dealer === s) badges.push("dealer");
      if (!hand.length) badges.push("sits out");
      if (st.soloist === s) badges.push("soloist");
      const colour = g.cala ? s : sideOf(g, s);
      table.append(
        el(
          "tr",
          { id: `seat-${s}`, class: "seat", "data-side": colour },
          el("th", { class: `who side-${colour}` }, el("span", { class: "seat-name" }, name(g, s)), el("span", { class: "seat-no" }, `seat ${s}`), badges.map((b) => el("span", { class: "badge" }, b))),
          handCell,
          slot,
        ),
      );
    });
  }

  function panel(id, title, cards, note) {
    return el("div", { class: "panel", id }, el("h3", {}, title), el("div", { class: "cards" }, cards), note ? el("p", { class: "note" }, note) : null);
  }

  function extras(st) {
    const box = $("extras");
    box.replaceChildren();
    if (!st.d) return;
    const o = st.d.o;
    const g = st.g;
    if (o.trump) {
      const suit = { D: "denari", C: "coppe", S: "spade", B: "bastoni" }[o.trump[1]];
      box.append(panel("trump", "Trump", [face(st, o.trump)], `${g.family.trump(st)}: ${suit} are trumps.`));
    }
    if (o.widow) {
      const to = st.score ? `It goes to ${who(g, st.score.last_trick)} with the last trick.` : "Face down until the deal's end; it goes to the last trick's winner.";
      box.append(panel("widow", "Widow", o.widow.map((c) => face(st, c)), to));
    }
    if (o.stock) {
      const left = o.stock.length - st.drawnCount;
      const cards = showAll ? o.stock.slice(st.drawnCount).map((c) => face(st, c)) : left ? [back()] : [];
      const note = showAll ? "In draw order, the top first." : g.family.stock;
      box.append(panel("stock", "Stock", [el("span", { id: "stock-count", class: "count" }, String(left)), ` card${left === 1 ? "" : "s"} left `, cards], note));
    }
    if (g.cala && o.monte) {
      const shown = st.ended && !showAll ? " The deal is over: every card is shown." : "";
      box.append(panel("monte", "Monte", o.monte.map((c) => face(st, c)), `${monteNote(st)}.${shown}`));
      if (st.score && st.score.set_aside) {
        box.append(panel("set-aside", "Set aside", st.score.set_aside.map((c) => face(st, c)), `To ${who(g, st.score.last_trick)} with the last trick.`));
      }
    }
  }

  function auction(st) {
    const box = $("auction");
    box.hidden = !st.g.cala || !st.d;
    box.replaceChildren();
    if (box.hidden) return;
    const g = st.g;
    box.append(el("h3", {}, "Auction"), el("ol", { id: "bids" }, st.bids.map((b) => el("li", { "data-seat": b.seat }, `${who(g, b.seat)}: ${b.bid}`))));
    if (st.contract !== null) box.append(el("p", { id: "contract" }, `Contract: ${st.contract}, by ${who(g, st.soloist)}.`));
    if (st.call) {
      box.append(el("p", { id: "called" }, "Called: ", face(st, st.call.card), st.call.holder === null ? " (in the monte)" : ` (held by ${who(g, st.call.holder)})`));
    }
  }

  function points(st) {
    const table = $("points");
    const note = $("points-note");
    table.replaceChildren();
    note.textContent = "";
    if (st.d) note.textContent = st.g.family.points(st, table);
  }

  /* The rows of a points table in thirds: [label, class, thirds, floored, declared or null]. */
  function thirdsRows(table, rows, declared) {
    table.append(el("tr", {}, el("th", { class: "name" }, ""), el("th", {}, "thirds"), el("th", {}, "floored"), declared ? el("th", {}, "declared") : null));
    rows.forEach(([label, cls, thirds, floored, decl], k) => {
      table.append(el("tr", { id: `points-${k}` }, el("td", { class: `name ${cls}` }, label), el("td", { id: `thirds-${k}` }, String(thirds)), el("td", { id: `floored-${k}` }, String(floored)), decl === null ? null : el("td", { id: `declared-${k}` }, String(decl))));
    });
  }

  const THIRDS_NOTE = {
    scored: "The score line's own figures: the last trick's 3 thirds (and any widow or set-aside cards) included.",
    running: "Card thirds captured in the tricks so far, and their points floored; the last trick's point comes with the score.",
  };

  function tressettePoints(st, table) {
    const g = st.g;
    const s = st.score;
    const thirds = s ? s.thirds : st.thirds;
    const floored = s ? s.card_points : thirds.map((x) => Math.floor(x / 3));
    const declared = s ? s.declarations : st.declared;
    thirdsRows(table, thirds.map((x, k) => [sideName(g, k), `side-${k}`, x, floored[k], declared[k]]), true);
    return s ? THIRDS_NOTE.scored : THIRDS_NOTE.running;
  }

  function calabresellaPoints(st, table) {
    const g = st.g;
    const s = st.score;
    if (st.soloist === null) return st.redeal ? "Nobody bid: no points." : "Points count once a contract is made.";
    const thirds = s ? s.thirds : st.thirds;
    const floored = thirds.map((x) => Math.floor(x / 3));
    if (s) floored[0] = s.soloist_points;
    const defenders = after(st, st.soloist).map((t) => name(g, t));
    thirdsRows(table, [
      [`soloist: ${who(g, st.soloist)}`, `side-${st.soloist}`, thirds[0], floored[0], null],
      [`defenders: ${defenders.join(" & ")}`, "", thirds[1], floored[1], null],
    ], false);
    return s ? THIRDS_NOTE.scored : THIRDS_NOTE.running;
  }

  /* Briscola's card_values are whole card points, 120 in a deal. */
  function briscolaPoints(st, table) {
    const g = st.g;
    const s = st.score;
    const captured = s ? s.card_points : st.thirds;
    table.append(el("tr", {}, el("th", { class: "name" }, ""), el("th", {}, "card points")));
    captured.forEach((x, k) => {
      table.append(el("tr", { id: `points-${k}` }, el("td", { class: `name side-${k}` }, sideName(g, k)), el("td", { id: `card-points-${k}` }, String(x))));
    });
    return s ? `The score line's card points, of 120: ${briscolaWinner(g, s)}.` : "Card points captured in the tricks so far, of 120; more than 60 wins the deal.";
  }

  function briscolaWinner(g, s) {
    const k = s.points.findIndex((p) => p > 0);
    return k < 0 ? "60 each, a drawn deal that nobody wins" : `${sideName(g, k)} wins the deal with ${s.card_points[k]}`;
  }

  /* The score line's own figures; its points and totals are in the game's table too. */
  function dealScore(st) {
    const box = $("deal-score");
    const s = st.score;
    box.hidden = !s;
    box.replaceChildren();
    if (!s) return;
    const table = el("table", { class: "data", id: "score-table" });
    st.g.family.score(st, table);
    box.append(el("h3", {}, `Deal ${s.deal}: the score`), table);
  }

  const cells = (values, tag = "td") => values.map((v) => el(tag, {}, v instanceof Node || Array.isArray(v) ? v : String(v)));

  function tressetteScore(st, table) {
    const g = st.g;
    const s = st.score;
    table.append(el("tr", {}, el("th", { class: "name" }, ""), cells(["thirds", "cards", "decl.", "points"], "th")));
    s.thirds.forEach((_, k) => {
      table.append(el("tr", {}, el("td", { class: `name side-${k}` }, g.sides < g.seats ? `side ${k}` : name(g, k)), cells([s.thirds[k], s.card_points[k], s.declarations[k], s.points[k]])));
    });
    const cappotto = s.cappotto === null ? "none" : sideName(g, s.cappotto);
    table.append(el("caption", {}, `Last trick: ${who(g, s.last_trick)} · cappotto: ${cappotto}`));
  }

  function calabresellaScore(st, table) {
    const g = st.g;
    const s = st.score;
    const facts = [
      ["contract", s.contract], ["soloist", who(g, s.soloist)], ["soloist's points", s.soloist_points],
      ["made it", s.success ? "yes" : "no"], ["cappotto", s.cappotto ? "yes" : "no"],
      ["stramazzo", s.stramazzo ? "yes" : "no"], ["value", s.value],
      ["thirds (soloist, defenders)", s.thirds.join(", ")], ["last trick", who(g, s.last_trick)],
      ["set aside", s.set_aside.map((c) => face(st, c, "mini"))],
    ];
    for (const [label, value] of facts) table.append(el("tr", {}, el("th", { class: "name" }, label), cells([value])));
  }

  function briscolaScore(st, table) {
    const g = st.g;
    const s = st.score;
    table.append(el("tr", {}, el("th", { class: "name" }, ""), cells(["card points", "deals won", "in all"], "th")));
    s.card_points.forEach((_, k) => {
      table.append(el("tr", {}, el("td", { class: `name side-${k}` }, sideName(g, k)), cells([s.card_points[k], s.points[k], s.totals[k]])));
    });
    table.append(el("caption", { id: "deal-winner" }, `Of 120: ${briscolaWinner(g, s)}; ${g.rules.target} deals won win the game.`));
  }

  function totals(st) {
    const g = st.g;
    const table = $("totals");
    const before = st.d && st.d.before ? st.d.before : zeros(g.sides);
    const s = st.score;
    const after_ = s ? s.totals : st.result ? st.result.totals : before;
    table.replaceChildren(el("tr", {}, el("th", { class: "name" }, ""), el("th", {}, "before"), el("th", {}, "this deal"), el("th", {}, "total")));
    for (let k = 0; k < g.sides; k++) {
      table.append(el("tr", {}, el("td", { class: `name side-${k}` }, sideName(g, k)), el("td", {}, String(before[k])), el("td", {}, s ? String(s.points[k]) : ""), el("td", { id: `total-${k}` }, String(after_[k]))));
    }
  }

  // -- what differs between families ----------------------------------------------------------

  /* Each family's own words and tables, keyed by the game line's `game` (the family): the
     trump panel's note, the stock panel's, the score's log line, the points table (it returns
     its note) and the score panel. Only the fields a family's lines carry are read. */
  const TRESSETTE = {
    trump: (st) => `${who(st.g, st.d.o.dealer)}'s last card, shown to all`,
    stock: "Face down; each card drawn is shown to both players.",
    scored: (g, o) => `Deal ${o.deal} scored: ${o.points.join(" – ")}; totals ${o.totals.join(" – ")}.`,
    points: tressettePoints,
    score: tressetteScore,
  };
  // Calabresella has no trump and no stock: only its scoring is its own.
  const CALABRESELLA = { ...TRESSETTE, points: calabresellaPoints, score: calabresellaScore };
  const BRISCOLA = {
    trump: (st) => {
      const drawer = st.drawn.findIndex((cards) => cards.includes(st.d.o.trump));
      return "Turned up under the stock and drawn last" + (drawer < 0 ? "" : ` (by ${who(st.g, drawer)})`);
    },
    // A finished record shows every draw; at the table each was seen by its drawer alone.
    stock: "Face down; each card drawn was seen by its drawer alone, the trump by all.",
    scored: (g, o) => `Deal ${o.deal} scored: card points ${o.card_points.join(" – ")}, ${briscolaWinner(g, o)}; deals won ${o.totals.join(" – ")}.`,
    points: briscolaPoints,
    score: briscolaScore,
  };
  const FAMILIES = { calabresella: CALABRESELLA, briscola: BRISCOLA, "briscola-a-quattro": BRISCOLA };

  // -- moving -------------------------------------------------------------------------------

  function target(how) {
    const g = games[gi];
    const last = g.lines.length - 1;
    const starts = g.deals.map((d) => d.start);
    const nextOf = (list) => list.find((k) => k > step) ?? last;
    const prevOf = (list) => [...list].reverse().find((k) => k < step) ?? 0;
    return {
      first: 0, last, next: step + 1, prev: step - 1,
      "next-trick": nextOf(g.stops), "prev-trick": prevOf(g.stops),
      "next-deal": nextOf(starts), "prev-deal": prevOf(starts),
    }[how];
  }

  function go(game, to) {
    const g = games[game];
    if (game !== gi) {
      gi = game;
      $("game-select").value = String(game);
      nav(g);
      info(g);
    }
    step = Math.max(0, Math.min(g.lines.length - 1, Number.isFinite(to) ? Math.trunc(to) : 0));
    guarded(render);
    // Browsers refuse bursts of history calls (a key held down): the address follows
    // once the stepping pauses. A link followed meanwhile wins: its hashchange may still be
    // queued behind this timer, and overwriting the address would lose where it points.
    clearTimeout(hashTimer);
    const seen = location.hash;
    hashTimer = setTimeout(() => {
      if (location.hash !== seen) return;
      const d = dealAt(games[gi], step);
      const hash = `#game=${gi + 1}&deal=${d ? d.number : 0}&step=${step}` + (showAll ? "&all=1" : "");
      if (location.hash !== hash) history.replaceState(null, "", hash);
    }, 120);
  }

  function nav(g) {
    const box = $("deals-nav");
    const button = (k, label, kind) => el("button", { type: "button", class: `nav-${kind}`, "data-step": k, title: `step ${k}` }, label);
    box.replaceChildren();
    for (const d of g.deals) {
      const row = el("div", { class: "deal-row", "data-deal": d.number }, button(d.start, `Deal ${d.number}`, "deal"));
      if (d.tricks.length) row.append(el("span", { class: "muted" }, " tricks "));
      d.tricks.forEach((k) => row.append(button(k, String(g.lines[k].o.trick), "trick")));
      if (d.end !== null && d.end !== g.resultAt) row.append(button(d.end, g.lines[d.end].o.type === "redeal" ? "redeal" : "score", "end"));
      box.append(row);
    }
    if (g.resultAt !== null) box.append(el("div", { class: "deal-row" }, button(g.resultAt, "Result", "end")));
  }

  function info(g) {
    const h = g.h;
    const length = h.deals === null ? `to ${g.rules.target}` : `${h.deals} deal${h.deals === 1 ? "" : "s"}`;
    const seatsText = [...Array(g.seats).keys()].map((s) => who(g, s)).join(", ");
    $("game-info").textContent = `Game ${gi + 1} of ${games.length} · ${h.game} · seed “${h.seed}” · ${length} · ${seatsText}`;
    $("rules").textContent = Object.entries(g.rules).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(" · ");
  }

  function fromHash() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    const notes = [];
    const whole = (key) => (/^\d+$/.test(p.get(key) || "") ? Number(p.get(key)) : NaN);
    let game = 0;
    if (p.has("game")) {
      if (whole("game") >= 1 && whole("game") <= games.length) game = whole("game") - 1;
      else notes.push(`game ${p.get("game")} (the record has ${games.length})`);
    }
    const g = games[game];
    let to = g.deals.length ? g.deals[0].start : 0;
    if (p.has("step")) {
      if (whole("step") < g.lines.length) to = whole("step");
      else notes.push(`step ${p.get("step")} (game ${game + 1} has steps 0 to ${g.lines.length - 1})`);
    } else if (p.has("deal")) {
      const d = g.deals.find((x) => String(x.number) === p.get("deal"));
      if (d) to = d.start;
      else notes.push(`deal ${p.get("deal")} (game ${game + 1} has deals ${g.deals.map((x) => x.number).join(", ")})`);
    }
    showAll = p.get("all") === "1";
    const notice = $("replay-notice");
    notice.hidden = !notes.length;
    notice.textContent = notes.length ? `The link names ${notes.join(" and ")}, which is not in this record; showing the nearest point instead.` : "";
    gi = -1;
    go(game, to);
  }

  // -- wiring ---------------------------------------------------------------------------------

  function failed(e) {
    const box = $("replay-error");
    box.textContent = e instanceof Problem ? `This record cannot be replayed: ${e.message}.` : `The replay viewer failed: ${e.message}`;
    box.hidden = false;
    $("replay-view").hidden = true;
    if (!(e instanceof Problem)) throw e;
  }

  function guarded(f) {
    try {
      f();
    } catch (e) {
      failed(e);
    }
  }

  function setup() {
    const select = $("game-select");
    games.forEach((g, k) => {
      const seatsText = [...new Set([...Array(g.seats).keys()].map((s) => name(g, s)))].join(" vs ");
      select.append(el("option", { value: k }, `Game ${k + 1}: ${seatsText}` + (g.result ? ` (${g.result.winner === null ? "draw" : "won by " + sideName(g, g.result.winner)})` : "")));
    });
    $("game-choice").hidden = games.length < 2;
    select.addEventListener("change", () => go(Number(select.value), games[Number(select.value)].deals.length ? games[Number(select.value)].deals[0].start : 0));
    for (const how of ["first", "last", "next", "prev", "next-trick", "prev-trick", "next-deal", "prev-deal"]) {
      $(how).addEventListener("click", () => go(gi, target(how)));
    }
    $("step-slider").addEventListener("input", (e) => go(gi, Number(e.target.value)));
    $("step-input").addEventListener("change", (e) => go(gi, Number(e.target.value)));
    $("show-all").addEventListener("change", (e) => {
      showAll = e.target.checked;
      go(gi, step);
    });
    $("deals-nav").addEventListener("click", (e) => {
      const b = e.target.closest("button[data-step]");
      if (b) go(gi, Number(b.dataset.step));
    });
    const keys = {
      ArrowRight: "next", ArrowLeft: "prev", ArrowDown: "next-trick", ArrowUp: "prev-trick",
      PageDown: "next-deal", PageUp: "prev-deal", Home: "first", End: "last",
    };
    document.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      if (e.target.closest && e.target.closest("input[type=number], input[type=range], select, textarea")) return;
      let how = keys[e.key];
      if (e.shiftKey && (e.key === "ArrowRight" || e.key === "ArrowLeft")) how = e.key === "ArrowRight" ? "next-trick" : "prev-trick";
      if (!how) return;
      e.preventDefault();
      go(gi, target(how));
    });
    window.addEventListener("hashchange", () => guarded(fromHash));
    $("replay-view").hidden = false;
  }

  guarded(() => {
    games = load();
    setup();
    fromHash();
  });
})();
