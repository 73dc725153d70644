---------------------------- MODULE TpxTransport ----------------------------
(***************************************************************************)
(* tpx-transport as built: one Messages-protocol interface over one of     *)
(* two providers, chosen once from the credentials present at start-up.    *)
(*                                                                         *)
(* This module keeps every variable, action and invariant of the seed      *)
(* model (seed/TpxTransport.tla, see DESIGN.md) with the same meaning, and *)
(* adds what the implementation does besides:                              *)
(*                                                                         *)
(*  - retries inside the request phase: a bounded attempts counter; a      *)
(*    retryable failure re-sends the same wire body, so a retry never      *)
(*    changes wireIds;                                                     *)
(*  - two exchange modes: send (one message) and stream (a sequence of     *)
(*    deliveries); a stream may fail after a prefix, in which case the     *)
(*    caller has seen Messages-shaped events, then gets an error, and the  *)
(*    pending obligations are cleared;                                     *)
(*  - cancellation: the caller's AbortSignal ends a request in an error;   *)
(*  - the session's refusal of a request whose tool_result ids are not     *)
(*    exactly the pending ids (MODEL_EPAIRING, nothing sent, ledger kept). *)
(*                                                                         *)
(* The session's own abort is the seed's CallerAbort.                      *)
(*                                                                         *)
(* Every action of the extension either is a seed action on the seed's    *)
(* twelve variables, or leaves those variables unchanged, with one         *)
(* exception: StreamFail, an exchange failing after its response began,    *)
(* which the seed has no action for.                                       *)
(*                                                                         *)
(* Checked properties (safety, finite turns):                              *)
(*   TypeOK, ShapeInv, PairingInv, SelectionInv, BoundedInv (the seed's,   *)
(*   the first and last extended to the new variables); NoReplayInv,       *)
(*   StreamInv (new); SelectionStable (the seed's); RetryKeepsBody (new);  *)
(*   termination via CHECK_DEADLOCK.                                       *)
(***************************************************************************)
EXTENDS Naturals, FiniteSets

CONSTANTS
    ToolIds,      \* small set of model-value tool ids
    MaxTurns,     \* bound on exchanges per boot
    MaxRetries,   \* retries per exchange (the transport's maxRetries)
    MaxChunks,    \* bound on stream events delivered per exchange
    ANTHROPIC, TPX, NONE

ASSUME /\ MaxTurns \in Nat
       /\ MaxRetries \in Nat
       /\ MaxChunks \in Nat \ {0}

Providers == {ANTHROPIC, TPX, NONE}
Shapes    == {"messages", "openai"}
Phases    == {"idle", "req", "resp"}
Outcomes  == {"none", "ok", "err"}
Modes     == {"send", "stream"}

VARIABLES
    hasKey,       \* static API key present at boot
    hasToken,     \* OAuth bearer token present at boot
    provider,     \* provider chosen at net init, fixed for the boot
    turn,         \* completed exchanges
    phase,        \* where the current exchange is
    pending,      \* tool_use ids the model emitted, awaiting tool_result
    reqIds,       \* tool_result ids in the caller's outbound Messages request
    wireShape,    \* protocol shape of the body currently on the wire
    wireIds,      \* tool ids carried by the body on the wire
    emitted,      \* ids the provider actually emitted (pre-translation truth)
    gotShape,     \* shape of the last body handed back to the caller
    lastOutcome,  \* result of the last completed exchange
    mode,         \* "send" or "stream": how the current (or last) exchange answers
    attempts,     \* attempts made by the current (or last) exchange; 0 before the first
    chunks        \* stream events handed to the caller in the current (or last) exchange

seedVars == <<hasKey, hasToken, provider, turn, phase, pending, reqIds,
              wireShape, wireIds, emitted, gotShape, lastOutcome>>

vars == <<hasKey, hasToken, provider, turn, phase, pending, reqIds,
          wireShape, wireIds, emitted, gotShape, lastOutcome,
          mode, attempts, chunks>>

\* Deterministic selection at net init: key wins, then token, then nothing.
Select(k, t) == IF k THEN ANTHROPIC ELSE IF t THEN TPX ELSE NONE

\* The protocol each provider speaks on the wire.
NativeShape(p) == IF p = TPX THEN "openai" ELSE "messages"

\* What the transport hands the caller for a body of shape s.
ToCaller(s) == IF s = "openai" THEN "messages" ELSE s

Init ==
    /\ hasKey \in BOOLEAN
    /\ hasToken \in BOOLEAN
    /\ provider = Select(hasKey, hasToken)
    /\ turn = 0
    /\ phase = "idle"
    /\ pending = {}
    /\ reqIds = {}
    /\ wireShape = "messages"
    /\ wireIds = {}
    /\ emitted = {}
    /\ gotShape = "messages"
    /\ lastOutcome = "none"
    /\ mode = "send"
    /\ attempts = 0
    /\ chunks = 0

CredsUnchanged == UNCHANGED <<hasKey, hasToken, provider>>

ExchangeUnchanged == UNCHANGED <<mode, attempts, chunks>>

(***************************************************************************)
(* The caller's side.                                                      *)
(***************************************************************************)

\* The caller answers every pending tool_use with exactly one tool_result
\* and sends a Messages-protocol body, to be answered as one message or as
\* a stream. The first attempt goes out; nothing has been delivered yet.
CallerSend ==
    /\ phase = "idle"
    /\ turn < MaxTurns
    /\ provider # NONE
    /\ \E m \in Modes : mode' = m
    /\ reqIds' = pending
    /\ wireShape' = NativeShape(provider)
    /\ wireIds' = pending
    /\ phase' = "req"
    /\ attempts' = 1
    /\ chunks' = 0
    /\ UNCHANGED <<turn, pending, emitted, gotShape, lastOutcome>>
    /\ CredsUnchanged

\* The caller offers tool_results for ids other than exactly the pending
\* ones. The session refuses the request with MODEL_EPAIRING before
\* anything is sent: no exchange happens, no variable changes, and the
\* obligations stay for a corrected request (or CallerAbort). As a step it
\* is a stutter; it is listed so that the refusal has a name.
CallerMispair ==
    /\ phase = "idle"
    /\ turn < MaxTurns
    /\ \E ids \in SUBSET ToolIds :
        /\ ids # pending
        /\ UNCHANGED vars

\* The caller cannot produce tool results: the turn aborts with an error and
\* the pending obligations are discarded with it (the session's abort()).
CallerAbort ==
    /\ phase = "idle"
    /\ turn < MaxTurns
    /\ provider # NONE
    /\ pending # {}
    /\ lastOutcome' = "err"
    /\ pending' = {}
    /\ turn' = turn + 1
    /\ UNCHANGED <<phase, reqIds, wireShape, wireIds, emitted, gotShape>>
    /\ CredsUnchanged
    /\ ExchangeUnchanged

\* The caller's AbortSignal fires while the request is out (in flight,
\* or waiting between retries): the exchange ends with MODEL_EABORTED.
\* Cancelling during a stream, after its prefix, is a StreamFail. On these
\* variables the step equals ProviderFail; the error code tells them apart.
CallerCancel ==
    /\ phase = "req"
    /\ lastOutcome' = "err"
    /\ pending' = {}
    /\ phase' = "idle"
    /\ turn' = turn + 1
    /\ UNCHANGED <<reqIds, wireShape, wireIds, emitted, gotShape>>
    /\ CredsUnchanged
    /\ ExchangeUnchanged

(***************************************************************************)
(* The transport and the provider.                                         *)
(***************************************************************************)

\* No credentials were present at boot: the exchange fails immediately
\* with a 401-like MODEL_EAUTH error, with no network I/O.
NoProvider ==
    /\ phase = "idle"
    /\ turn < MaxTurns
    /\ provider = NONE
    /\ lastOutcome' = "err"
    /\ turn' = turn + 1
    /\ UNCHANGED <<phase, pending, reqIds, wireShape, wireIds, emitted, gotShape>>
    /\ CredsUnchanged
    /\ ExchangeUnchanged

\* A retryable failure (network error, 408, 409, 429, 5xx) with retries
\* left: the same wire body is sent again. Nothing but the attempt count
\* changes; in particular the ids on the wire are the caller's, still.
ProviderRetry ==
    /\ phase = "req"
    /\ attempts <= MaxRetries
    /\ attempts' = attempts + 1
    /\ UNCHANGED <<hasKey, hasToken, provider, turn, phase, pending, reqIds,
                   wireShape, wireIds, emitted, gotShape, lastOutcome,
                   mode, chunks>>

\* The provider replies in its native shape, emitting any subset of tool
\* ids as tool_use blocks (ANTHROPIC) or tool_calls (TPX).
ProviderReply ==
    /\ phase = "req"
    /\ \E ids \in SUBSET ToolIds :
        /\ emitted' = ids
        /\ wireIds' = ids
        /\ wireShape' = NativeShape(provider)
        /\ phase' = "resp"
    /\ UNCHANGED <<turn, pending, reqIds, gotShape, lastOutcome>>
    /\ CredsUnchanged
    /\ ExchangeUnchanged

\* Network, TLS, HTTP, protocol or deadline failure, not retried (not
\* retryable, or no retries left): the exchange ends in an error.
ProviderFail ==
    /\ phase = "req"
    /\ lastOutcome' = "err"
    /\ pending' = {}
    /\ phase' = "idle"
    /\ turn' = turn + 1
    /\ UNCHANGED <<reqIds, wireShape, wireIds, emitted, gotShape>>
    /\ CredsUnchanged
    /\ ExchangeUnchanged

\* One event of a streamed answer reaches the caller, Messages-shaped.
\* The first one commits the exchange: from here on it is never retried.
StreamChunk ==
    /\ phase = "resp"
    /\ mode = "stream"
    /\ chunks < MaxChunks
    /\ chunks' = chunks + 1
    /\ gotShape' = ToCaller(wireShape)
    /\ UNCHANGED <<turn, phase, pending, reqIds, wireShape, wireIds, emitted,
                   lastOutcome, mode, attempts>>
    /\ CredsUnchanged

\* A stream breaks after its prefix (upstream error, truncation, idle
\* deadline, or the caller stops reading): the caller has seen Messages
\* events, then an error; the obligations of the unfinished turn are
\* dropped.
StreamFail ==
    /\ phase = "resp"
    /\ mode = "stream"
    /\ chunks > 0
    /\ lastOutcome' = "err"
    /\ pending' = {}
    /\ phase' = "idle"
    /\ turn' = turn + 1
    /\ UNCHANGED <<reqIds, wireShape, wireIds, emitted, gotShape>>
    /\ CredsUnchanged
    /\ ExchangeUnchanged

\* The transport hands the caller a Messages-shaped body (send), or the
\* stream reaches message_stop after at least one event (stream). A
\* foreign-shaped response is translated back first; the reverse
\* translation is a bijection on tool ids, so the caller's new obligations
\* are exactly the ids the provider emitted.
Deliver ==
    /\ phase = "resp"
    /\ (mode = "send" \/ chunks > 0)
    /\ gotShape' = ToCaller(wireShape)
    /\ pending' = wireIds
    /\ lastOutcome' = "ok"
    /\ phase' = "idle"
    /\ turn' = turn + 1
    /\ UNCHANGED <<reqIds, wireShape, wireIds, emitted>>
    /\ CredsUnchanged
    /\ ExchangeUnchanged

\* Terminal self-loop once the turn budget is spent, so deadlock checking
\* certifies that every non-final state makes progress.
Halted ==
    /\ phase = "idle"
    /\ turn = MaxTurns
    /\ UNCHANGED vars

Next ==
    \/ CallerSend
    \/ CallerMispair
    \/ CallerAbort
    \/ CallerCancel
    \/ NoProvider
    \/ ProviderRetry
    \/ ProviderReply
    \/ ProviderFail
    \/ StreamChunk
    \/ StreamFail
    \/ Deliver
    \/ Halted

Spec == Init /\ [][Next]_vars

----------------------------------------------------------------------------

TypeOK ==
    /\ hasKey \in BOOLEAN
    /\ hasToken \in BOOLEAN
    /\ provider \in Providers
    /\ turn \in 0..MaxTurns
    /\ phase \in Phases
    /\ pending \subseteq ToolIds
    /\ reqIds \subseteq ToolIds
    /\ wireShape \in Shapes
    /\ wireIds \subseteq ToolIds
    /\ emitted \subseteq ToolIds
    /\ gotShape \in Shapes
    /\ lastOutcome \in Outcomes
    /\ mode \in Modes
    /\ attempts \in 0..(MaxRetries + 1)
    /\ chunks \in 0..MaxChunks

\* (1) The caller only ever sees Messages-shaped bodies and events,
\*     regardless of which provider is behind the transport.
ShapeInv == gotShape = "messages"

\* (2) Tool id pairing survives translation in both directions, retries
\*     included: the wire carries exactly the caller's tool_result ids on
\*     the way out and exactly the provider's emitted ids on the way back,
\*     and after delivery the caller's obligations equal what the provider
\*     emitted.
PairingInv ==
    /\ (phase = "req")  => (wireIds = reqIds /\ reqIds = pending)
    /\ (phase = "resp") => (wireIds = emitted)
    /\ (phase = "idle" /\ lastOutcome = "ok") => (pending = emitted)

\* (3) Provider selection is the deterministic function of the boot-time
\*     credentials; key wins over token, no credentials means no provider.
SelectionInv == provider = Select(hasKey, hasToken)

\* Bounded turns, attempts and deliveries; nothing escapes the phase machine.
BoundedInv ==
    /\ turn <= MaxTurns
    /\ attempts <= MaxRetries + 1
    /\ chunks <= MaxChunks

\* (4) Nothing has reached the caller while a request is out, so a retry
\*     can never make the caller see an exchange twice; and a request out
\*     has made at least one and at most MaxRetries + 1 attempts.
NoReplayInv ==
    (phase = "req") => (chunks = 0 /\ attempts \in 1..(MaxRetries + 1))

\* (5) Only a stream delivers in pieces.
StreamInv == (chunks > 0) => (mode = "stream")

\* Selection is stable: credentials and the chosen provider never change
\* after boot.
SelectionStable == [][CredsUnchanged]_vars

\* A step that stays in the request phase (a retry) changes neither the
\* caller's obligations nor the body on the wire.
RetryKeepsBody ==
    [][(phase = "req" /\ phase' = "req") =>
         UNCHANGED <<pending, reqIds, wireShape, wireIds, emitted, mode, chunks>>]_vars
=============================================================================
