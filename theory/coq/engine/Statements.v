(* The workspace invariants of the paper, proved on the engine model for
   every sequence of operations.  Each theorem is named after the invariant
   it proves (vistalab.workspace.INVARIANTS: budget, protocol,
   recoverability, stable_ids, dashboard) and restates its hypotheses so it
   reads on its own; the paper's sentence is in the comment above it.

   Reading guide.  [init c d = Some s0] is a workspace created with
   configuration [c] (budget B = budget c, guard ceiling = hard c, fixed
   overhead = fixed c: tool schemas, protocol, reply priming; worst-case
   management dashboard = mgmt c); [run s0 ops] is the state after any
   sequence of operations [ops] (registration of system, user, assistant,
   tool-call and tool-result messages through the budget guard; archive,
   restore, delete, recover), refused operations included. *)

From Coq Require Import List Arith Lia.
Import ListNotations.
From VistaLabEngine Require Import Model Theorems.

(* budget.  Methodology, "Workspace invariants": "|C_t| <= B after preflight
   and final assembly."  The management floor -- fixed overhead, pinned
   blocks and the worst-case management dashboard -- fits the budget at
   creation (the engine refuses the configuration otherwise) and after every
   operation (a pin that would break it is refused); then every rendering,
   ordinary or management, fits the budget. *)
Theorem workspace_budget (c : config) (d : nat) (s0 : state) (ops : list op) :
  fixed c + mgmt c <= budget c ->
  init c d = Some s0 ->
  let s := run s0 ops in
  fixed c + pinned_cost s + mgmt c <= budget c /\ tokens s <= budget c.
Proof.
  intros _ I s.
  assert (C : cfg s = c) by exact (run_cfg c d s0 ops I).
  assert (F : floor s <= budget (cfg s)).
  { unfold s. rewrite cfg_run. apply floor_run. rewrite (cfg_init c d s0 I).
    exact (floor_init c d s0 I). }
  split.
  - unfold floor in F. rewrite C in F. exact F.
  - rewrite <- C. exact (tokens_bound s F).
Qed.

(* dashboard.  Methodology, "Workspace invariants": "the dashboard reports
   the same token estimates used by these checks."  The dashboard's figures
   add up to the total preflight compares with B (normal mode exactly when
   total <= B); that total is the fixed overhead plus the cost of every
   message of the ordinary rendering, dashboard included. *)
Theorem workspace_dashboard (c : config) (d : nat) (s0 : state) (ops : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  total s = overhead s + conversation s + dash s /\
  total s = fixed c + costs (normal_render s) /\
  (mode_of s = Normal <-> total s <= budget c).
Proof.
  intros I s.
  assert (C : cfg s = c) by exact (run_cfg c d s0 ops I).
  split; [reflexivity|]. split.
  - rewrite <- C. apply total_is_rendering_cost.
  - rewrite <- C. apply mode_normal.
Qed.
