// The Tavolo C++ SDK: #include "tavolo/tavolo.hpp", subclass tavolo::Bot, call tavolo::run.
#pragma once

#include "tavolo/bot.hpp"
#include "tavolo/cards.hpp"
#include "tavolo/turn.hpp"
