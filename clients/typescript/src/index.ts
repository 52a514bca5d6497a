/**
 * tavolo-bot: write a Tressette bot for the Tavolo referee in TypeScript.
 *
 *     import { run, type Turn } from "tavolo-bot";
 *     run(() => ({ choose: (turn: Turn) => turn.legal[0].id })); // one bot per ticket, or per match with a key
 */

export { type Bot, type BotFactory, type StreamInfo, eventKind, gameSeed, matchSeed, streamSeed } from "./bot";
export {
  CARDS,
  RANKS,
  SIGNAL_NAMES,
  SUITS,
  beats,
  briscolaBeats,
  briscolaPoints,
  briscolaStrength,
  briscolaWinningCard,
  isCard,
  pointsInThirds,
  rankOf,
  signalName,
  sortCards,
  strength,
  suitOf,
  winningCard,
} from "./cards";
export { pick, seededRandom } from "./random";
export {
  ConfigError,
  EXIT_FAILED,
  EXIT_OK,
  EXIT_USAGE,
  PROTOCOL_VERSION,
  type RunOptions,
  type Settings,
  loadSettings,
  play,
  run,
} from "./runner";
export { type TrickPlay, Turn, cardOf, isDeclaration, isPlay } from "./turn";
// The generated protocol types and enums (Action, ActionKind, Event, Observation, Signal, ...).
export * from "./gen/tavolo/v1/referee";
