// Package tavolo is the Go SDK for bots of Tavolo, the Tressette referee.
//
// A bot implements Bot (one method, Choose) and hands a constructor to Main:
//
//	func main() {
//		tavolo.Main(func(tavolo.StreamInfo) tavolo.Bot { return tavolo.ChooseFunc(choose) })
//	}
//
//	func choose(turn *tavolo.Turn) uint32 { return turn.Legal()[0].GetId() }
//
// Main reads TAVOLO_REFEREE (host:port, or unix:/path for a Unix-domain socket),
// TAVOLO_TICKET (one ticket, or several separated by commas: one concurrent stream and one
// Bot each), TAVOLO_TLS_CA (a PEM root certificate: TLS), TAVOLO_SEED and
// TAVOLO_RECONNECT_SECONDS. It opens RefereeService.Play,
// sends the Hello, passes events to the optional EventHandler and MatchOverHandler hooks,
// answers each DecisionRequest with the id Choose returns, reconnects a broken stream with
// the same ticket (and retries ALREADY_EXISTS "seat_taken"; every other refusal, such as
// "ticket_used", "wrong_socket", "process_gone" or "unknown_ticket", ends the stream at
// once; so do three attempts in a row on which a host:port referee closes a plain-text
// connection before its first HTTP/2 frame, as one serving TLS does: the line names
// TAVOLO_TLS_CA), and exits 0 after MatchOver, 1 when a stream fails (one line on
// stderr), 2 when a setting is missing. StreamInfo.Seed and StreamInfo.GameSeed give the
// seed texts.
//
// With TAVOLO_KEY (a tournament's entrant key, instead of TAVOLO_TICKET) Main opens
// TAVOLO_STREAMS streams (default 2) with the key; the referee answers each with
// KeyAccepted, then seats it in the entrant's matches one after the other, each from
// Welcome to MatchOver. Each match gets a fresh Bot (StreamInfo.Match is its ordinal on
// the stream, 1, 2, ...; StreamInfo.Seed ends in "/match/<n>"); a stream reconnected
// mid-match keeps the Bot of the seat the Welcome names. The referee ends a key's stream
// with status OK when the entrant has no match left: then Main exits 0. UNAUTHENTICATED
// "unknown_key" and PERMISSION_DENIED "key_revoked" end it at once (exit 1).
//
// Cards are text, rank then suit ("3D", "QB", "AS"): see Ranks, Suits, Strength, Points,
// Beats and WinningCard. The protocol messages are the generated types of
// github.com/tavolo/tavolo/clients/go/gen/tavolo/v1; the common ones are aliased here.
package tavolo
