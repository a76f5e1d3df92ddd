(* keep_pending (the engine's default): Model.v's management rendering keeps
   the tool-call batch still waiting for results, whole, after the shown
   prefix and the pinned blocks (workspace/_preflight.py, _management), and
   the floor reserves its room (tail_on, tail_msgs, tail_need, floor in
   Model.v).  Its protocol validity is management_render_valid and its
   budget tokens_bound (Theorems.v); this file states what is kept. *)
From Coq Require Import List Arith Bool Lia PeanoNat.
Import ListNotations.
From VistaLabEngine Require Import Model Theorems.

(* Whole: with keep_pending, while calls wait, the management rendering ends
   with the newest turn's messages (the calling block and everything
   registered for it) and a placeholder per pending call, before the
   dashboard. *)
Theorem management_keeps_batch s :
  tail_on s = true ->
  exists pre, management_render s
              = pre ++ last_turn_msgs s ++ pending_msgs s ++ [dash_msg (mdash_cost s)].
Proof.
  intro T. unfold management_render, tail_msgs. rewrite T.
  eexists. rewrite <- app_assoc. reflexivity.
Qed.

(* Without keep_pending, or with no call waiting, nothing is kept beyond the
   prefix and the pinned blocks. *)
Theorem management_no_batch s :
  tail_on s = false ->
  management_render s
  = (if cache_prefix (cfg s) then shown_prefix s (management_cut s) else pinned_msgs s)
    ++ [dash_msg (mdash_cost s)].
Proof. intro T. unfold management_render, tail_msgs. rewrite T. reflexivity. Qed.

(* The floor reserves the kept batch and the notice reserve per pending call. *)
Lemma floor_reserves s :
  tail_on s = true ->
  floor s = fixed (cfg s) + pinned_cost s + mgmt (cfg s)
            + costs (last_turn_msgs s ++ pending_msgs s) + length (pending s) * nres (cfg s).
Proof. intro T. unfold floor, tail_need, tail_msgs. rewrite T. lia. Qed.
