// The example bot: always legal, a little better than random, deterministic.
#pragma once

#include "tavolo/tavolo.hpp"

class ExampleBot : public tavolo::Bot {
 public:
  // 1. declare what it can, then end the declarations;
  // 2. never call out (unless nothing else is legal);
  // 3. play without signals: lead the cheapest card; when following, take the trick with
  //    the cheapest card that beats it, else throw the cheapest card;
  // 4. anything else (action kinds it does not know): the first legal action.
  // In Briscola (MatchStarted.game) it goes by Briscola's order, points and trumps, and a
  // trump costs more than any other card.
  int choose(const tavolo::Turn& turn) override;
  void on_event(const tavolo::Event& event) override;

 private:
  // The match's game family, which decides the cards' order ("briscola",
  // "briscola-a-quattro" for Briscola).
  std::string game_;
};
