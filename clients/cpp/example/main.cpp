// The example bot as a program: reads TAVOLO_REFEREE and TAVOLO_TICKET (or TAVOLO_KEY), plays,
// exits.
#include <memory>

#include "example_bot.hpp"

int main() {
  // One bot per ticket (with a key: per match). It uses no randomness, so the same match
  // plays the same way (a bot that draws would seed from stream.seed, or
  // stream.game_seed(n) for game n).
  return tavolo::run([](const tavolo::StreamInfo&) { return std::make_unique<ExampleBot>(); });
}
