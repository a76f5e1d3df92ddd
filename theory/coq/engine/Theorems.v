(* The workspace invariants proved on the engine model (Model.v) for every
   sequence of operations.  The main statements are restated in the paper's
   words in Statements.v; this file holds the invariants and their proofs. *)

From Coq Require Import List Arith Bool Lia PeanoNat Permutation.
Import ListNotations.
From VistaLabEngine Require Import Model.

(* ------------------------------------------------------------------ *)
(* Sums of costs *)

Lemma sum_nil : sum [] = 0.
Proof. reflexivity. Qed.

Lemma sum_cons x l : sum (x :: l) = x + sum l.
Proof. reflexivity. Qed.

Lemma sum_app l1 l2 : sum (l1 ++ l2) = sum l1 + sum l2.
Proof. induction l1; cbn [app]; [reflexivity|]. rewrite !sum_cons, IHl1. lia. Qed.

Lemma costs_app a b : costs (a ++ b) = costs a + costs b.
Proof. unfold costs. rewrite map_app, sum_app. reflexivity. Qed.

Lemma costs_flat_map {A} (f : A -> list msg) l :
  costs (flat_map f l) = sum (map (fun x => costs (f x)) l).
Proof.
  induction l; cbn [flat_map map]; [reflexivity|]. rewrite costs_app, IHl, sum_cons. reflexivity.
Qed.

Lemma sum_split {A} (p : A -> bool) (g : A -> nat) l :
  sum (map (fun x => if p x then g x else 0) l) + sum (map (fun x => if p x then 0 else g x) l)
  = sum (map g l).
Proof. induction l; cbn [map]; [reflexivity|]. rewrite !sum_cons. destruct (p a); lia. Qed.

(* ------------------------------------------------------------------ *)
(* Dashboard: the figures it reports are the numbers the checks use. *)

Lemma total_is_rendering_cost s : total s = fixed (cfg s) + costs (normal_render s).
Proof.
  unfold total, total_with, overhead, conversation, normal_render.
  rewrite !costs_app, costs_flat_map.
  rewrite <- (sum_split is_system_turn (fun t => costs (turn_msgs s t))).
  replace (costs [dash_msg (dash s)]) with (dash s) by (unfold costs; simpl; lia). lia.
Qed.

Lemma mode_normal s : mode_of s = Normal <-> total s <= budget (cfg s).
Proof.
  unfold mode_of. destruct (Nat.leb_spec (total s) (budget (cfg s))) as [L|L]; split;
    intro E; try discriminate; auto; lia.
Qed.

(* ------------------------------------------------------------------ *)
(* The configuration never changes. *)

Lemma cfg_update s f : cfg (update s f) = cfg s.
Proof. reflexivity. Qed.

Lemma cfg_offload_all xs s : cfg (offload_all s xs) = cfg s.
Proof.
  unfold offload_all. revert s. induction xs; intro s; simpl; auto.
  rewrite IHxs. unfold offload_block. destruct (find_block s a); reflexivity.
Qed.

Lemma cfg_archive s us h st : cfg (archive_units s us h st) = cfg s.
Proof.
  unfold archive_units.
  destruct us as [|[n|g] [|u r]]; try reflexivity;
  try (destruct (find_block s n) as [b|]; [destruct (in_prompt (b_status b))|]; reflexivity);
  try (destruct (find_group s g); reflexivity).
Qed.

Lemma cfg_restore us s : cfg (fold_left restore_unit us s) = cfg s.
Proof.
  revert s; induction us; intro s; simpl; auto. rewrite IHus. destruct a; reflexivity.
Qed.

Lemma cfg_delete us s : cfg (fold_left delete_unit us s) = cfg s.
Proof.
  revert s; induction us; intro s; simpl; auto. rewrite IHus. destruct a; reflexivity.
Qed.

Ltac crush_cfg :=
  repeat match goal with
  | |- context [match ?x with _ => _ end] => destruct x
  | |- context [if ?x then _ else _] => destruct x
  end; simpl; auto.

Lemma cfg_step s o : cfg (fst (step s o)) = cfg s.
Proof.
  destruct o; simpl.
  - destruct k; try reflexivity; unfold reg_plain; destruct (pending s); simpl; auto;
      destruct (_ && _); reflexivity.
  - unfold reg_call. destruct (pending s); [|reflexivity]. destruct ids; [reflexivity|].
    destruct (negb _); reflexivity.
  - unfold reg_result. destruct (negb _); [reflexivity|].
    destruct (decide _ _ _ _) as [g off]. simpl. apply cfg_offload_all.
  - unfold act. destruct (resolve s AArchive us); simpl; auto. apply cfg_archive.
  - unfold act. destruct (resolve s ARestore us); simpl; auto. apply cfg_restore.
  - unfold act. destruct (resolve s ADelete us); simpl; auto. apply cfg_delete.
  - destruct (find_block s n); [destruct (recover s n)|]; reflexivity.
Qed.

Lemma cfg_run s os : cfg (run s os) = cfg s.
Proof. revert s; induction os; intro s; simpl; auto. rewrite IHos, cfg_step. reflexivity. Qed.

Lemma cfg_init c d s : init c d = Some s -> cfg s = c.
Proof. unfold init. destruct (_ <=? _); intro H; inversion H; reflexivity. Qed.

(* ------------------------------------------------------------------ *)
(* Blocks under the transitions *)

Lemma flat_map_map_turn g ts :
  flat_map turn_blocks (map (map_turn g) ts) = map g (flat_map turn_blocks ts).
Proof.
  induction ts as [|t ts IH]; simpl; auto. rewrite IH, map_app. destruct t; reflexivity.
Qed.

Lemma blocks_update s f :
  blocks (update s f) = map (fun b => if protected s b then b else f b) (blocks s).
Proof. unfold blocks, update, with_turns; simpl. apply flat_map_map_turn. Qed.

Lemma blocks_add_result ts r :
  last_is_call ts = true -> flat_map turn_blocks (add_result ts r) = flat_map turn_blocks ts ++ [r].
Proof.
  unfold last_is_call, add_result. intro H.
  pose proof (rev_involutive ts) as R.
  destruct (rev ts) as [|[b|c rs] before]; try discriminate.
  rewrite <- R. simpl. rewrite !flat_map_app. simpl. rewrite !app_nil_r, <- app_assoc. reflexivity.
Qed.

(* ------------------------------------------------------------------ *)
(* Pinned blocks: the management floor *)

Lemma pos_pinned s s' tf b : b_status b = Pinned -> pos_msgs s tf b = pos_msgs s' tf b.
Proof. intro H. unfold pos_msgs. rewrite H. reflexivity. Qed.

Definition keeps_pins (g : block -> block) (bs : list block) : Prop :=
  forall b, In b bs -> (b_status b = Pinned -> g b = b) /\ (b_status b <> Pinned -> b_status (g b) <> Pinned).

Lemma pinned_msgs_map s s' g :
  blocks s' = map g (blocks s) -> keeps_pins g (blocks s) -> pinned_msgs s' = pinned_msgs s.
Proof.
  unfold pinned_msgs. intros E K. rewrite E. clear E.
  induction (blocks s) as [|b bs IH]; simpl; auto.
  rewrite IH by (intros x Hx; apply K; right; exact Hx).
  destruct (K b (or_introl eq_refl)) as [K1 K2].
  destruct (b_status b) eqn:St.
  - destruct (b_status (g b)) eqn:Sg; auto. exfalso; apply (K2 ltac:(discriminate)); auto.
  - rewrite (K1 eq_refl), St. f_equal. apply pos_pinned; auto.
  - destruct (b_status (g b)) eqn:Sg; auto. exfalso; apply (K2 ltac:(discriminate)); auto.
  - destruct (b_status (g b)) eqn:Sg; auto. exfalso; apply (K2 ltac:(discriminate)); auto.
  - destruct (b_status (g b)) eqn:Sg; auto. exfalso; apply (K2 ltac:(discriminate)); auto.
Qed.

Lemma pinned_msgs_same s s' : blocks s' = blocks s -> pinned_msgs s' = pinned_msgs s.
Proof.
  intro E. apply (pinned_msgs_map s s' (fun b => b)).
  - rewrite map_id. exact E.
  - intros b _. split; auto.
Qed.

Definition no_new_pins (f : block -> block) : Prop :=
  forall b, b_status b <> Pinned -> b_status (f b) <> Pinned.

Lemma pinned_update s f : no_new_pins f -> pinned_msgs (update s f) = pinned_msgs s.
Proof.
  intro F. apply (pinned_msgs_map s _ (fun b => if protected s b then b else f b)).
  - apply blocks_update.
  - intros b _. split.
    + intro P. unfold protected. rewrite P. reflexivity.
    + intro P. destruct (protected s b); [exact P | apply F; exact P].
Qed.

Lemma pinned_with_store s st : pinned_msgs (with_store s st) = pinned_msgs s.
Proof. apply pinned_msgs_same; reflexivity. Qed.
Lemma pinned_with_groups s gs : pinned_msgs (with_groups s gs) = pinned_msgs s.
Proof. apply pinned_msgs_same; reflexivity. Qed.
Lemma pinned_with_counts s a b : pinned_msgs (with_counts s a b) = pinned_msgs s.
Proof. apply pinned_msgs_same; reflexivity. Qed.
Lemma pinned_with_dash s d : pinned_msgs (with_dash s d) = pinned_msgs s.
Proof. apply pinned_msgs_same; reflexivity. Qed.
Lemma pinned_with_pending s p o : pinned_msgs (with_pending s p o) = pinned_msgs s.
Proof. apply pinned_msgs_same; reflexivity. Qed.
Lemma pinned_update_group s g f : pinned_msgs (update_group s g f) = pinned_msgs s.
Proof. apply pinned_msgs_same; reflexivity. Qed.

#[export] Hint Rewrite pinned_with_store pinned_with_groups pinned_with_counts pinned_with_dash
  pinned_with_pending pinned_update_group : pins.

Ltac nopin :=
  let b := fresh "b" in let H := fresh "H" in
  intros b H;
  repeat match goal with
         | |- context [if ?c then _ else _] => destruct c
         | |- context [match ?x with _ => _ end] => destruct x
         end; simpl; try discriminate; auto.

Lemma pinned_offload_all xs s : pinned_msgs (offload_all s xs) = pinned_msgs s.
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intro s; simpl; auto.
  rewrite IH. unfold offload_block. cbv zeta.
  destruct (find_block s x); autorewrite with pins; apply pinned_update; nopin.
Qed.

Lemma pinned_archive s us h st : pinned_msgs (archive_units s us h st) = pinned_msgs s.
Proof.
  unfold archive_units. cbv zeta.
  destruct us as [|[n|g] [|u r]]; autorewrite with pins;
  try (destruct (find_block s n) as [b|]; [destruct (in_prompt (b_status b))|]);
  try (destruct (find_group s g)); autorewrite with pins; try reflexivity;
  apply pinned_update; nopin.
Qed.

Lemma pinned_restore us s : pinned_msgs (fold_left restore_unit us s) = pinned_msgs s.
Proof.
  revert s; induction us as [|u us IH]; intro s; simpl; auto. rewrite IH.
  destruct u; unfold restore_unit; cbv zeta; autorewrite with pins; apply pinned_update; nopin.
Qed.

Lemma pinned_delete us s : pinned_msgs (fold_left delete_unit us s) = pinned_msgs s.
Proof.
  revert s; induction us as [|u us IH]; intro s; simpl; auto. rewrite IH.
  destruct u; unfold delete_unit; cbv zeta; autorewrite with pins; apply pinned_update; nopin.
Qed.

Lemma pinned_msgs_app s s' b :
  blocks s' = blocks s ++ [b] ->
  pinned_msgs s' = pinned_msgs s ++ match b_status b with Pinned => pos_msgs s false b | _ => [] end.
Proof.
  intro E. unfold pinned_msgs. rewrite E, flat_map_app. simpl. rewrite app_nil_r. f_equal.
  - clear E. induction (blocks s) as [|x xs IH]; simpl; auto. rewrite IH.
    destruct (b_status x) eqn:St; auto. rewrite (pos_pinned s' s false x St). reflexivity.
  - destruct (b_status b) eqn:St; auto. apply pos_pinned; auto.
Qed.

Lemma blocks_snoc s t : blocks (with_turns s (turns s ++ [t])) = blocks s ++ turn_blocks t.
Proof. unfold blocks, with_turns. cbn [turns]. rewrite flat_map_app. simpl. rewrite app_nil_r. reflexivity. Qed.

Lemma last_is_call_map g ts : last_is_call (map (map_turn g) ts) = last_is_call ts.
Proof. unfold last_is_call. rewrite <- map_rev. destruct (rev ts) as [|[]]; reflexivity. Qed.

Lemma last_is_call_offload_all xs s :
  last_is_call (turns s) = true -> last_is_call (turns (offload_all s xs)) = true.
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intros s N; simpl; auto.
  apply IH. unfold offload_block; cbv zeta.
  destruct (find_block s x); unfold with_store, update, with_turns; cbn [turns];
    rewrite last_is_call_map; exact N.
Qed.

Lemma floor_plain s k pin data c d :
  floor s <= budget (cfg s) -> floor (fst (reg_plain s k pin data c d)) <= budget (cfg s).
Proof.
  unfold reg_plain. intro F.
  destruct (pending s); [|exact F].
  assert (Hb : forall p, blocks (with_turns s (turns s ++ [TP (plain_block (S (nblocks s)) k p data c)]))
                        = blocks s ++ [plain_block (S (nblocks s)) k p data c])
    by (intro p; rewrite blocks_snoc; reflexivity).
  destruct pin; cbn [andb negb].
  - destruct (floor s + c <=? budget (cfg s)) eqn:L; cbn [negb fst]; [|exact F].
    apply Nat.leb_le in L. unfold floor, pinned_cost in *. cbn [cfg with_dash with_counts with_turns] in *.
    rewrite pinned_with_dash, pinned_with_counts, (pinned_msgs_app s _ _ (Hb true)).
    cbn [plain_block b_status]. rewrite costs_app.
    replace (costs (pos_msgs s false (plain_block (S (nblocks s)) k true data c))) with c
      by (destruct k; unfold costs, sum; simpl; lia).
    lia.
  - cbn [fst]. unfold floor, pinned_cost in *. cbn [cfg with_dash with_counts with_turns] in *.
    rewrite pinned_with_dash, pinned_with_counts, (pinned_msgs_app s _ _ (Hb false)).
    cbn [plain_block b_status]. rewrite app_nil_r. exact F.
Qed.

(* Every operation keeps the management floor within the budget. *)
Lemma floor_step s o : floor s <= budget (cfg s) -> floor (fst (step s o)) <= budget (cfg s).
Proof.
  intro F. destruct o; cbn [step].
  - destruct k; try exact F; apply floor_plain; exact F.
  - unfold reg_call. destruct (pending s); [|exact F]. destruct ids; [exact F|].
    destruct (negb _); [exact F|]. cbn [fst].
    unfold floor, pinned_cost in *. cbn [cfg with_dash with_counts with_turns with_pending] in *.
    rewrite pinned_with_dash, pinned_with_counts, pinned_with_pending.
    rewrite (pinned_msgs_app s _
      (mkBlock (S (nblocks s)) KCall data 0 (n :: ids) (c, c) (0, 0) 0 false Visible None 0 (0, 0) 0))
      by (rewrite blocks_snoc; reflexivity).
    cbn [b_status]. rewrite app_nil_r. exact F.
  - unfold reg_result. destruct (negb _ ) eqn:N; [exact F|].
    destruct (decide _ _ _ _) as [g off]. cbn [fst].
    apply Bool.negb_false_iff, andb_true_iff in N. destruct N as [_ N].
    unfold floor, pinned_cost in *.
    rewrite pinned_with_dash, pinned_with_counts, pinned_with_pending.
    match goal with |- context [with_turns ?s2 (add_result (turns ?s2) ?r)] =>
      assert (H : blocks (with_turns s2 (add_result (turns s2) r)) = blocks s2 ++ [r])
        by (unfold blocks at 1, with_turns; cbn [turns]; apply blocks_add_result;
            apply last_is_call_offload_all; exact N);
      rewrite (pinned_msgs_app _ _ _ H) end.
    destruct (match g with GAdmit => false | _ => true end); cbn [b_status];
      rewrite app_nil_r, pinned_offload_all;
      cbn [cfg with_dash with_counts with_pending with_turns]; rewrite cfg_offload_all; exact F.
  - unfold act. destruct (resolve s AArchive us); [|exact F]. cbn [fst].
    unfold floor, pinned_cost in *. rewrite pinned_with_dash, pinned_archive.
    cbn [with_dash cfg]. rewrite cfg_archive. exact F.
  - unfold act. destruct (resolve s ARestore us); [|exact F]. cbn [fst].
    unfold floor, pinned_cost in *. rewrite pinned_with_dash, pinned_restore.
    cbn [with_dash cfg]. rewrite cfg_restore. exact F.
  - unfold act. destruct (resolve s ADelete us); [|exact F]. cbn [fst].
    unfold floor, pinned_cost in *. rewrite pinned_with_dash, pinned_delete.
    cbn [with_dash cfg]. rewrite cfg_delete. exact F.
  - destruct (find_block s n); [destruct (recover s n)|]; exact F.
Qed.

Lemma floor_run s os : floor s <= budget (cfg s) -> floor (run s os) <= budget (cfg s).
Proof.
  revert s; induction os as [|o os IH]; intros s F; simpl; auto.
  rewrite <- (cfg_step s o). apply IH. rewrite cfg_step. apply floor_step; exact F.
Qed.

Lemma floor_init c d s : init c d = Some s -> floor s <= budget c.
Proof.
  unfold init. destruct (fixed c + mgmt c <=? budget c) eqn:L; intro H; inversion H; subst.
  apply Nat.leb_le in L. unfold floor, pinned_cost, pinned_msgs, blocks, costs, sum. simpl. lia.
Qed.

(* The rendering's tokens: within B in normal mode by preflight, within the
   floor in management mode. *)
Lemma tokens_bound s : floor s <= budget (cfg s) -> tokens s <= budget (cfg s).
Proof.
  unfold tokens, render. intro F. destruct (mode_of s) eqn:M.
  - apply mode_normal in M. rewrite total_is_rendering_cost in M. exact M.
  - unfold management_render. rewrite costs_app. unfold floor, pinned_cost in F.
    replace (costs [dash_msg (mgmt (cfg s))]) with (mgmt (cfg s)) by (unfold costs, sum; simpl; lia).
    lia.
Qed.

Lemma run_cfg c d s0 os : init c d = Some s0 -> cfg (run s0 os) = c.
Proof. intro I. rewrite cfg_run. exact (cfg_init c d s0 I). Qed.
