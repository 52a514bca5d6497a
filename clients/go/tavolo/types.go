package tavolo

import pb "github.com/tavolo/tavolo/clients/go/gen/tavolo/v1"

// The protocol messages a bot meets most, so that a bot needs to import only this package.
// They are the generated types of gen/tavolo/v1 (package tavolov1), not copies.
type (
	Action          = pb.Action
	ActionKind      = pb.ActionKind
	Signal          = pb.Signal
	Event           = pb.Event
	Observation     = pb.Observation
	DecisionRequest = pb.DecisionRequest
	Play            = pb.Play
)

// Action kinds. Later protocol versions may add more: a bot should ignore kinds it does
// not know rather than fail on them.
const (
	KindUnspecified     = pb.ActionKind_ACTION_KIND_UNSPECIFIED
	KindPlay            = pb.ActionKind_ACTION_KIND_PLAY
	KindDeclare         = pb.ActionKind_ACTION_KIND_DECLARE
	KindEndDeclarations = pb.ActionKind_ACTION_KIND_END_DECLARATIONS
	KindCallOut         = pb.ActionKind_ACTION_KIND_CALL_OUT
)

// Signals a card play may carry.
const (
	SignalNone          = pb.Signal_SIGNAL_UNSPECIFIED
	SignalBusso         = pb.Signal_SIGNAL_BUSSO
	SignalVolo          = pb.Signal_SIGNAL_VOLO
	SignalStriscio      = pb.Signal_SIGNAL_STRISCIO
	SignalRibusso       = pb.Signal_SIGNAL_RIBUSSO
	SignalStriscioLungo = pb.Signal_SIGNAL_STRISCIO_LUNGO
	SignalStriscioCorto = pb.Signal_SIGNAL_STRISCIO_CORTO
)

// ProtocolVersion is the protocol version this SDK speaks (Hello.protocol_version).
const ProtocolVersion = 1
