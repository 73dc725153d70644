----------------------------- MODULE TpxRoutes -----------------------------
(***************************************************************************)
(* Routes: several upstreams behind the tpx provider (tpx serve --config). *)
(* The provider is chosen once (SelectionStable, as in TpxTransport); each *)
(* exchange takes the route Route(kind), a pure function of the request,   *)
(* and tries its targets in order. An attempt that fails before the first  *)
(* byte reached the caller, in a way that says the upstream is away or     *)
(* overloaded, falls back to the next target whose breaker is not open;    *)
(* retries and fallbacks share one budget. A breaker per upstream opens    *)
(* after Failures consecutive failures, turns half-open when the cool-down *)
(* passes, and then admits one probe.                                      *)
(*                                                                         *)
(* Executable twin: test/spec/model-routes.ts (explored by explore.ts,     *)
(* replayed against the real transport by test/spec/replay-routes.ts).     *)
(***************************************************************************)
EXTENDS Naturals, Sequences, FiniteSets

CONSTANTS MaxTurns, ToolIds, MaxRetries, Failures, Mode

Upstreams == {"u1", "u2"}
Kinds == {"haiku", "other"}

\* The route of a request: "haiku" models go to u1 alone; others to u2, falling back to u1.
Route(k) == IF k = "haiku" THEN <<"u1">> ELSE <<"u2", "u1">>

Closed == [state |-> "closed", count |-> 0, probing |-> FALSE]

VARIABLES turn, phase, kind, index, attempts, delivered,
          pending, origin, reqIds, wireIds, breakers, lastOutcome

vars == <<turn, phase, kind, index, attempts, delivered,
          pending, origin, reqIds, wireIds, breakers, lastOutcome>>

Target == Route(kind)[index]

\* Whether an attempt may start on an upstream whose breaker is b, and b after admitting it.
CanAdmit(b) == b.state = "closed" \/ (b.state = "half-open" /\ ~b.probing)
Admitted(b) == IF b.state = "half-open" THEN [b EXCEPT !.probing = TRUE] ELSE b

\* The breaker after an attempt's verdict.
Verdict(b, failed) ==
  IF ~failed THEN Closed
  ELSE IF b.probing \/ b.count + 1 >= Failures
       THEN [state |-> "open", count |-> b.count + 1, probing |-> FALSE]
       ELSE [b EXCEPT !.count = b.count + 1, !.probing = FALSE]

\* The first position from i on whose breaker (in bs) admits an attempt; 0 when none does.
FirstAdmitted(k, i, bs) ==
  LET ps == {p \in i..Len(Route(k)) : CanAdmit(bs[Route(k)[p]])}
  IN IF ps = {} THEN 0 ELSE CHOOSE p \in ps : \A q \in ps : p <= q

EndWithError ==
  /\ turn' = turn + 1 /\ phase' = "idle" /\ kind' = "none" /\ index' = 0
  /\ attempts' = 0 /\ delivered' = FALSE /\ pending' = {} /\ origin' = "none"
  /\ lastOutcome' = "err"

Init ==
  /\ turn = 0 /\ phase = "idle" /\ kind = "none" /\ index = 0 /\ attempts = 0
  /\ delivered = FALSE /\ pending = {} /\ origin = "none" /\ reqIds = {} /\ wireIds = {}
  /\ breakers = [u \in Upstreams |-> Closed] /\ lastOutcome = "none"

\* The caller sends a request of kind k answering every pending tool_use.
CallerSend(k) ==
  /\ phase = "idle" /\ turn < MaxTurns
  /\ LET p == FirstAdmitted(k, 1, breakers) IN
     /\ p # 0
     /\ phase' = "req" /\ kind' = k /\ index' = p /\ attempts' = 1 /\ delivered' = FALSE
     /\ breakers' = [breakers EXCEPT ![Route(k)[p]] = Admitted(@)]
  /\ reqIds' = pending /\ wireIds' = pending
  /\ UNCHANGED <<turn, pending, origin, lastOutcome>>

\* Every target of the route is cooling down: 503 at once, nothing sent.
NoTarget(k) ==
  /\ phase = "idle" /\ turn < MaxTurns
  /\ FirstAdmitted(k, 1, breakers) = 0
  /\ reqIds' = pending /\ wireIds' = pending
  /\ EndWithError
  /\ UNCHANGED breakers

\* An attempt fails before its first byte: "upstream" (connect, 429, 5xx, first-byte deadline) counts
\* against the breaker and may fall back or retry; "other" (a 400) ends the exchange.
AttemptFail(failure) ==
  /\ phase = "req"
  /\ LET judged == [breakers EXCEPT ![Target] = Verdict(@, failure = "upstream")]
         later == {p \in (index + 1)..Len(Route(kind)) : judged[Route(kind)[p]].state # "open"}
         budgetLeft == attempts <= MaxRetries
     IN
     /\ IF failure = "other" THEN EndWithError /\ breakers' = judged
        ELSE IF later # {}
        THEN LET p == FirstAdmitted(kind, CHOOSE p \in later : \A q \in later : p <= q, judged) IN
             IF budgetLeft /\ p # 0
             THEN /\ index' = p /\ attempts' = attempts + 1
                  /\ breakers' = [judged EXCEPT ![Route(kind)[p]] = Admitted(@)]
                  /\ UNCHANGED <<turn, phase, kind, delivered, pending, origin, lastOutcome>>
             ELSE EndWithError /\ breakers' = judged
        ELSE IF judged[Target].state = "open" \/ ~budgetLeft
        THEN EndWithError /\ breakers' = judged
        ELSE /\ attempts' = attempts + 1 /\ breakers' = judged
             /\ UNCHANGED <<turn, phase, kind, index, delivered, pending, origin, lastOutcome>>
  /\ UNCHANGED <<reqIds, wireIds>>

\* The first byte reaches the caller: the upstream is alive.
FirstByte ==
  /\ phase = "req"
  /\ phase' = "resp" /\ delivered' = TRUE
  /\ breakers' = [breakers EXCEPT ![Target] = Verdict(@, FALSE)]
  /\ UNCHANGED <<turn, kind, index, attempts, pending, origin, reqIds, wireIds, lastOutcome>>

\* A stream breaks after its first byte: an error, never a fallback.
StreamFail ==
  /\ phase = "resp" /\ Mode = "stream"
  /\ EndWithError
  /\ UNCHANGED <<reqIds, wireIds, breakers>>

\* The answer is delivered with the tool calls ids.
Deliver(ids) ==
  /\ phase = "resp"
  /\ turn' = turn + 1 /\ phase' = "idle" /\ kind' = "none" /\ index' = 0 /\ attempts' = 0
  /\ delivered' = FALSE /\ pending' = ids /\ origin' = Target /\ lastOutcome' = "ok"
  /\ UNCHANGED <<reqIds, wireIds, breakers>>

\* Between exchanges the cool-down passes: every open breaker turns half-open.
CoolDown ==
  /\ phase = "idle" /\ turn < MaxTurns
  /\ \E u \in Upstreams : breakers[u].state = "open"
  /\ breakers' = [u \in Upstreams |->
                    IF breakers[u].state = "open" THEN [breakers[u] EXCEPT !.state = "half-open"]
                    ELSE breakers[u]]
  /\ UNCHANGED <<turn, phase, kind, index, attempts, delivered, pending, origin, reqIds, wireIds, lastOutcome>>

Halted == phase = "idle" /\ turn >= MaxTurns /\ UNCHANGED vars

Next ==
  \/ \E k \in Kinds : CallerSend(k) \/ NoTarget(k)
  \/ \E f \in {"upstream", "other"} : AttemptFail(f)
  \/ FirstByte \/ StreamFail
  \/ \E ids \in SUBSET ToolIds : Deliver(ids)
  \/ CoolDown \/ Halted

Spec == Init /\ [][Next]_vars

---------------------------------------------------------------------------
RouteInv == phase = "idle" \/ (kind \in Kinds /\ index \in 1..Len(Route(kind)))
BudgetInv == attempts <= MaxRetries + 1
TargetNotOpen == phase # "req" \/ breakers[Target].state # "open"
PairingAcrossUpstreams == phase = "idle" \/ wireIds = reqIds

\* Once the first byte reached the caller, no other upstream is tried.
FallbackBeforeFirstByte ==
  [][delivered => (phase' = "idle" \/ (index' = index /\ attempts' = attempts))]_vars
\* A new attempt starts only where the breaker admitted it.
AttemptsOnlyWhereAdmitted ==
  [][(phase' = "req" /\ (phase = "idle" \/ attempts' # attempts))
       => breakers'[Route(kind')[index']].state # "open"]_vars
=============================================================================
