// The example bot as a program: reads TAVOLO_REFEREE and TAVOLO_TICKET, plays, exits.
#include "example_bot.hpp"

int main() {
  ExampleBot bot;  // no randomness: the same match plays the same way (TAVOLO_SEED unused)
  return tavolo::run(bot);
}
