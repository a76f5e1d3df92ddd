(* The vocabulary of the protocol and stable-ID statements (Statements.v's
   workspace_protocol and workspace_stable_ids): the OpenAI pairing rule, the
   Anthropic Messages rules and wire ids, and what of a block or group never
   changes.  Definitions only, no proofs (Theorems.v and Anthropic.v prove
   the statements; the mutation suite compiles these definitions against
   mutants of Model.v and refutes the statements on concrete runs). *)

From Coq Require Import List Arith Bool PeanoNat Permutation.
Import ListNotations.
From VistaLabEngine Require Import Model.

(* ------------------------------------------------------------------ *)
(* Stable IDs: what of a block and of a group never changes *)

Definition registered (b : block) : nat * kind * nat * nat * list nat :=
  (b_id b, b_kind b, b_data b, b_cid b, b_calls b).

Definition regs (s : state) := map registered (blocks s).

(* Groups: a group ID keeps its members. *)
Definition gmeaning (x : group) : nat * list uid * list nat := (g_id x, g_members x, g_leaves x).

(* ------------------------------------------------------------------ *)
(* Protocol: the OpenAI pairing rule *)

Fixpoint remove_first (i : nat) (l : list nat) : list nat :=
  match l with [] => [] | x :: r => if x =? i then r else x :: remove_first i r end.

(* [open]: the calls of the last assistant message not answered yet.  An
   assistant message with tool calls (distinct ids, at least one) comes when
   nothing is open and is followed by exactly one tool message per call
   before any other message; a tool message answers an open call. *)
Fixpoint openai_ok (open : list nat) (rs : list role) : bool :=
  match rs with
  | [] => match open with [] => true | _ => false end
  | RTool i :: r => existsb (Nat.eqb i) open && openai_ok (remove_first i open) r
  | RCalls ids :: r =>
      match open, ids with
      | [], _ :: _ => nodupb ids && openai_ok ids r
      | _, _ => false
      end
  | _ :: r => match open with [] => openai_ok [] r | _ => false end
  end.

Definition openai_valid (ms : list msg) : Prop := openai_ok [] (map m_role ms) = true.

(* ------------------------------------------------------------------ *)
(* Protocol: the Anthropic Messages rules *)

(* A turn of an Anthropic request: user (tool_result blocks first, then
   text) or assistant (text, then tool_use blocks). *)
Record aturn := mkTurn { a_user : bool; a_results : list nat; a_uses : list nat; a_text : nat }.

Definition turn_of (r : role) : aturn :=
  match r with
  | RTool i => mkTurn true [i] [] 0
  | RCalls ids => mkTurn false [] ids 0
  | RAssistant => mkTurn false [] [] 1
  | _ => mkTurn true [] [] 1
  end.

(* Consecutive messages of the same side merge into one turn (a user turn's
   tool results stay ahead of its text, in message order). *)
Definition merge (a b : aturn) : aturn :=
  mkTurn (a_user a) (a_results a ++ a_results b) (a_uses a ++ a_uses b) (a_text a + a_text b).

Fixpoint project (rs : list role) : list aturn :=
  match rs with
  | [] => []
  | r :: rest =>
      let t := turn_of r in
      match project rest with
      | t' :: ts => if Bool.eqb (a_user t) (a_user t') then merge t t' :: ts else t :: t' :: ts
      | [] => [t]
      end
  end.

Fixpoint drop_system (rs : list role) : list role :=
  match rs with RSystem :: r => drop_system r | _ => rs end.

(* Leading system messages go to the request's system field; a request that
   would open with an assistant turn gets a "[conversation start]" user turn. *)
Definition anthropic_request (rs : list role) : list aturn :=
  match project (drop_system rs) with
  | t :: ts => if a_user t then t :: ts else mkTurn true [] [] 1 :: t :: ts
  | [] => []
  end.

Fixpoint alternates (ts : list aturn) : bool :=
  match ts with
  | t :: ((t' :: _) as r) => negb (Bool.eqb (a_user t) (a_user t')) && alternates r
  | _ => true
  end.

Fixpoint perm_eqb (a b : list nat) : bool :=
  match a with
  | [] => match b with [] => true | _ => false end
  | x :: r => existsb (Nat.eqb x) b && perm_eqb r (remove_first x b)
  end.

(* [prev]: the tool_use ids of the previous assistant turn.  A user turn's
   tool_result blocks answer exactly those; an assistant turn has distinct
   tool_use ids. *)
Fixpoint pairs_ok (prev : list nat) (ts : list aturn) : bool :=
  match ts with
  | [] => match prev with [] => true | _ => false end
  | t :: r =>
      if a_user t then perm_eqb prev (a_results t) && pairs_ok [] r
      else match prev with [] => nodupb (a_uses t) && pairs_ok (a_uses t) r | _ => false end
  end.

(* Reused call ids.  OpenAI accepts a call id again once its call was
   answered; the Anthropic API refuses a repeated tool_use id anywhere in a
   request.  On the wire, the tool_use blocks of the k-th assistant turn and the
   tool_result blocks answering them carry the id (i, k).  (The engine spells
   such ids from the block that holds the call; the rules see only that the
   renaming is injective and applied to both sides of a pair.) *)
Record wturn := mkWire { w_user : bool; w_results : list (nat * nat);
                         w_uses : list (nat * nat); w_text : nat }.

Definition at_turn (k i : nat) : nat * nat := (i, k).

Fixpoint tag (k : nat) (ts : list aturn) : list wturn :=
  match ts with
  | [] => []
  | t :: r =>
      let k' := if a_user t then k else S k in
      mkWire (a_user t) (map (at_turn k') (a_results t)) (map (at_turn k') (a_uses t))
             (a_text t) :: tag k' r
  end.

(* The request as sent: the turns with their wire ids. *)
Definition anthropic_wire (rs : list role) : list wturn := tag 0 (anthropic_request rs).

(* [prev]: the wire ids of the previous assistant turn's tool_use blocks. *)
Fixpoint wire_pairs (prev : list (nat * nat)) (ts : list wturn) : Prop :=
  match ts with
  | [] => prev = []
  | t :: r =>
      if w_user t then Permutation prev (w_results t) /\ wire_pairs [] r
      else prev = [] /\ wire_pairs (w_uses t) r
  end.

(* The Anthropic rules: turns alternate starting with a user turn; each
   assistant turn's tool_use ids are answered exactly by the tool_result
   blocks leading the next user turn; and on the wire every tool_use id is
   unique in the whole request, each tool_result answering the tool_use of
   the turn before it. *)
Definition anthropic_valid (ms : list msg) : Prop :=
  let ts := anthropic_request (map m_role ms) in
  alternates ts = true /\ pairs_ok [] ts = true /\
  match ts with t :: _ => a_user t = true | [] => True end /\
  wire_pairs [] (anthropic_wire (map m_role ms)) /\
  NoDup (flat_map w_uses (anthropic_wire (map m_role ms))).
