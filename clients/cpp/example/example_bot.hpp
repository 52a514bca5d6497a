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
  int choose(const tavolo::Turn& turn) override;
};
