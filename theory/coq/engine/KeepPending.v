(* keep_pending (the engine's default): the management rendering that keeps
   the tool-call batch still waiting for results, whole, after the shown
   prefix and the pinned blocks (workspace/_preflight.py, _management), and
   its two properties, proved for every state the operations reach: it is
   protocol-valid (the kept batch's calls are answered, by the results that
   arrived and by a placeholder per pending call, and nothing separates them),
   and it costs at most the floor that reserves the batch's room. A first
   stage: Model.v's [step] and [render] do not use these definitions yet
   (the configuration has no keep_pending flag yet). *)
From Coq Require Import List Arith Bool Lia PeanoNat.
Import ListNotations.
From VistaLabEngine Require Import Model Theorems.

(* _pending_tail_start() is not None *)
Definition tail_on (kp : bool) (s : state) : bool :=
  kp && match pending s with [] => false | _ => true end.

Definition last_turn_msgs (s : state) : list msg :=
  match turns s with [] => [] | t0 :: _ => turn_msgs s (last (turns s) t0) end.

(* The kept batch: the newest turn (the calling block whose calls wait, and
   the results, notices and tombstones registered for it), then a
   placeholder per pending call. *)
Definition tail_msgs (kp : bool) (s : state) : list msg :=
  if tail_on kp s then last_turn_msgs s ++ pending_msgs s else [].

(* _pending_tail_need: the kept batch and [res] (the notice reserve) per pending call. *)
Definition tail_need (kp : bool) (res : nat) (s : state) : nat :=
  if tail_on kp s then costs (tail_msgs kp s) + length (pending s) * res else 0.

Definition floor_kp (kp : bool) (res : nat) (s : state) : nat := floor s + tail_need kp res s.

Definition management_cut_kp (kp : bool) (s : state) : nat :=
  prefix_cut s (budget (cfg s)
                - (fixed (cfg s) + pinned_cost s + costs (tail_msgs kp s) + mdash_cost s)).

Definition management_render_kp (kp : bool) (s : state) : list msg :=
  (if cache_prefix (cfg s) then shown_prefix s (management_cut_kp kp s) else pinned_msgs s)
  ++ tail_msgs kp s ++ [dash_msg (mdash_cost s)].

(* ------------------------------------------------------------------ *)
(* Budget: the rendering costs at most the floor that reserves the batch. *)

Lemma tail_need_ge kp res s : costs (tail_msgs kp s) <= tail_need kp res s.
Proof. unfold tail_need, tail_msgs. destruct (tail_on kp s); cbn; lia. Qed.

Lemma management_kp_budget kp res s :
  floor_kp kp res s <= budget (cfg s) ->
  fixed (cfg s) + costs (management_render_kp kp s) <= budget (cfg s).
Proof.
  intro F. unfold floor_kp, floor in F. pose proof (tail_need_ge kp res s) as T.
  unfold management_render_kp. rewrite !costs_app.
  replace (costs [dash_msg (mdash_cost s)]) with (mdash_cost s) by (unfold costs, sum; simpl; lia).
  assert (D : mdash_cost s <= mgmt (cfg s)) by (unfold mdash_cost; lia).
  destruct (cache_prefix (cfg s)).
  - pose proof (shown_prefix_cost s (management_cut_kp kp s)).
    pose proof (cut_room s (budget (cfg s)
                 - (fixed (cfg s) + pinned_cost s + costs (tail_msgs kp s) + mdash_cost s))).
    unfold management_cut_kp in *. lia.
  - unfold pinned_cost in F. lia.
Qed.

(* ------------------------------------------------------------------ *)
(* Protocol: the shown prefix leaves no call open, whatever its room. *)

Lemma prefix_pass s room R : proto_inv s ->
  openai_ok [] (map m_role (shown_prefix s (prefix_cut s room)) ++ R) = openai_ok [] R.
Proof.
  intro H. pose proof (normal_render_valid s H) as N. unfold openai_valid, normal_render in N.
  rewrite <- positions_msgs in N.
  set (k := prefix_cut s room).
  set (ps := positions s) in *.
  assert (K : k = 0 \/ opens_tool (flat_map snd (skipn k ps) ++ pending_msgs s) = false).
  { unfold k, prefix_cut. fold ps.
    match goal with |- context [back ?f ?k0 ?p] =>
      destruct (back_spec f k0 p (le_n _)) as [E|E]; [left; exact E|right; exact E] end. }
  assert (O : open_after [] (map m_role (flat_map snd (firstn k ps))) = Some []).
  { destruct K as [K|K]; [rewrite K; reflexivity|].
    rewrite <- (firstn_skipn k ps) in N. rewrite flat_map_app, <- !app_assoc, map_app, openai_app in N.
    destruct (open_after [] _) as [o|] eqn:E; [|discriminate].
    destruct o as [|j o]; [reflexivity|].
    destruct (open_next _ _ N ltac:(discriminate)) as [i [r Er]].
    exfalso. revert K Er. destruct (flat_map snd (skipn k ps) ++ pending_msgs s) as [|m ms] eqn:X.
    - rewrite app_assoc, X. cbn. discriminate.
    - rewrite app_assoc, X. cbn. intros K' Er'. injection Er'. intros _ Rr. rewrite Rr in K'. discriminate. }
  unfold shown_prefix. fold ps. rewrite !map_app, <- app_assoc, openai_app, O.
  rewrite plain_pass; [reflexivity|].
  assert (C := calls_not_pinned _ _ _ H). fold (blocks s) in C.
  assert (Sh : forall p, In p (skipn k ps) -> In (fst p) (blocks s) /\ exists tf, snd p = pos_msgs s tf (fst p)).
  { intros p Hp. apply positions_shape. apply (in_skipn_in k). exact Hp. }
  clear K N O. revert Sh. induction (skipn k ps) as [|p rest IH]; intro Sh; [reflexivity|].
  cbn [flat_map]. rewrite map_app, forallb_app, (IH (fun q Hq => Sh q (or_intror Hq))).
  rewrite andb_true_r. destruct (Sh p (or_introl eq_refl)) as [Hb [tf E]].
  unfold pin_part, pinned_plain. destruct (b_status (fst p)) eqn:St; try reflexivity.
  destruct (is_result (fst p)) eqn:Rs; [reflexivity|]. cbn [negb]. rewrite E.
  apply roles_plain.
  - intro Kc. exact (C (fst p) Hb St Kc).
  - unfold is_result in Rs. destruct (b_kind (fst p)); congruence.
Qed.

Lemma pinned_pass s R : proto_inv s ->
  openai_ok [] (map m_role (pinned_msgs s) ++ R) = openai_ok [] R.
Proof.
  unfold proto_inv, pinned_msgs. intro H.
  rewrite plain_pass; [reflexivity|].
  pose proof (calls_not_pinned _ _ _ H) as C. fold (blocks s) in C.
  induction (blocks s) as [|b bs IH]; simpl; auto.
  rewrite map_app, forallb_app, IH by (intros x Hx; apply C; right; auto).
  destruct (b_status b) eqn:St; simpl; auto.
  destruct (b_kind b) eqn:K.
  - rewrite roles_plain; auto; congruence.
  - rewrite roles_plain; auto; congruence.
  - rewrite roles_plain; auto; congruence.
  - exfalso. apply (C b (or_introl eq_refl) St K).
  - rewrite roles_result_user; auto.
Qed.

Lemma turns_ok_last ts : forall t0 d pend own,
  turns_ok (t0 :: ts) pend own -> turn_ok (last (t0 :: ts) d) pend own.
Proof.
  induction ts as [|t1 ts IH]; intros t0 d pend own H; [exact H|].
  destruct H as [_ H]. exact (IH t1 d pend own H).
Qed.

Lemma pending_roles s : map m_role (pending_msgs s) = map RTool (map fst (pending s)).
Proof. unfold pending_msgs. rewrite !map_map. reflexivity. Qed.

(* The kept batch, then the dashboard: the batch's calls, then exactly one
   tool message per call (a result, notice or tombstone, or a placeholder). *)
Lemma tail_valid kp s : proto_inv s ->
  openai_ok [] (map m_role (tail_msgs kp s ++ [dash_msg (mdash_cost s)])) = true.
Proof.
  intro H. unfold tail_msgs. destruct (tail_on kp s); [|reflexivity].
  unfold last_turn_msgs, proto_inv in *. destruct (turns s) as [|t0 ts] eqn:E.
  - cbn in H. rewrite !map_app, pending_roles, H. reflexivity.
  - rewrite <- app_assoc, !map_app, pending_roles.
    apply last_turn_ok with (own := owner s). apply turns_ok_last. exact H.
Qed.

Theorem management_kp_valid kp s : proto_inv s -> openai_valid (management_render_kp kp s).
Proof.
  intro H. unfold openai_valid, management_render_kp. rewrite map_app.
  destruct (cache_prefix (cfg s)).
  - unfold management_cut_kp. rewrite prefix_pass by exact H. exact (tail_valid kp s H).
  - rewrite pinned_pass by exact H. exact (tail_valid kp s H).
Qed.

(* Whole: with keep_pending, while calls wait, the rendering ends with the
   newest turn's messages (the calling block and everything registered for
   it) and a placeholder per pending call, before the dashboard. *)
Theorem management_kp_keeps_batch s :
  tail_on true s = true ->
  exists pre, management_render_kp true s
              = pre ++ last_turn_msgs s ++ pending_msgs s ++ [dash_msg (mdash_cost s)].
Proof.
  intro T. unfold management_render_kp, tail_msgs. rewrite T.
  eexists. rewrite <- app_assoc. reflexivity.
Qed.
