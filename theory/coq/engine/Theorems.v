(* The workspace invariants proved on the engine model (Model.v) for every
   sequence of operations.  The main statements are restated in the paper's
   words in Statements.v; this file holds the invariants and their proofs. *)

From Coq Require Import List Arith Bool Lia PeanoNat Permutation.
Import ListNotations.
From VistaLabEngine Require Import Model.
From VistaLabEngine Require Export Protocol.

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
  unfold archive_units, new_group.
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

(* The floor check that ends reg_result and act: split on it (the refused
   branch leaves the state as it was). *)
Ltac wf_split :=
  match goal with |- context [within_floor ?s ?s' ?r] =>
    unfold within_floor; destruct (floor s' <=? budget (cfg s)) eqn:?WF; cbn [fst snd] end.

Ltac wf_split_ :=
  match goal with |- context [within_floor ?s ?s' ?r] =>
    unfold within_floor; destruct (floor s' <=? budget (cfg s)); cbn [fst snd] end.

(* Split on whether the registered result is the notice. *)
Ltac rej := match goal with |- context [pend_guard ?a ?b ?c] => destruct (pend_guard a b c) end.

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
    destruct (negb _); [reflexivity|]. destruct (_ && _); reflexivity.
  - unfold reg_result. destruct (negb _); [reflexivity|].
    destruct (decide _ _ _ _) as [g off]. cbn [fst]. wf_split; [apply cfg_offload_all|reflexivity].
  - unfold act. destruct (resolve s AArchive us); simpl; auto. wf_split; auto. apply cfg_archive.
  - unfold act. destruct (resolve s ARestore us); simpl; auto. wf_split; auto. apply cfg_restore.
  - unfold act. destruct (resolve s ADelete us); simpl; auto. wf_split; auto. apply cfg_delete.
  - destruct (find_block s n); [destruct (recover s n)|]; reflexivity.
  - reflexivity.
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
  unfold archive_units, new_group. cbv zeta.
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

Lemma tail_need_nil s : pending s = [] -> tail_need s = 0.
Proof. unfold tail_need, tail_on. intro H. rewrite H. destruct (keep_pending (cfg s)); reflexivity. Qed.

Lemma floor_plain s k pin data c d :
  floor s <= budget (cfg s) -> floor (fst (reg_plain s k pin data c d)) <= budget (cfg s).
Proof.
  unfold reg_plain. intro F.
  destruct (pending s) eqn:Pn; [|exact F].
  assert (T : tail_need s = 0) by (apply tail_need_nil; exact Pn).
  assert (Hb : forall p, blocks (with_turns s (turns s ++ [TP (plain_block (S (nblocks s)) k p data c)]))
                        = blocks s ++ [plain_block (S (nblocks s)) k p data c])
    by (intro p; rewrite blocks_snoc; reflexivity).
  destruct pin; cbn [andb negb].
  - destruct (floor s + c <=? budget (cfg s)) eqn:L; cbn [negb fst]; [|exact F].
    apply Nat.leb_le in L. unfold floor, pinned_cost in *. cbn [cfg with_dash with_counts with_turns] in *.
    rewrite tail_need_nil by (cbn; exact Pn). rewrite T in *.
    rewrite pinned_with_dash, pinned_with_counts, (pinned_msgs_app s _ _ (Hb true)).
    cbn [plain_block b_status]. rewrite costs_app.
    replace (costs (pos_msgs s false (plain_block (S (nblocks s)) k true data c))) with c
      by (destruct k; unfold costs, sum; simpl; lia).
    lia.
  - cbn [fst]. unfold floor, pinned_cost in *. cbn [cfg with_dash with_counts with_turns] in *.
    rewrite tail_need_nil by (cbn; exact Pn). rewrite T in *.
    rewrite pinned_with_dash, pinned_with_counts, (pinned_msgs_app s _ _ (Hb false)).
    cbn [plain_block b_status]. rewrite app_nil_r. exact F.
Qed.

Lemma floor_with_dash s d : floor (with_dash s d) = floor s.
Proof. reflexivity. Qed.

Lemma pending_costs s : costs (pending_msgs s) = sum (map snd (pending s)).
Proof. unfold costs, pending_msgs. rewrite map_map. reflexivity. Qed.

Lemma last_turn_msgs_snoc s l x : turns s = l ++ [x] -> last_turn_msgs s = turn_msgs s x.
Proof.
  unfold last_turn_msgs. intro E. rewrite E. destruct (l ++ [x]) as [|t0 r] eqn:X.
  - destruct l; discriminate.
  - rewrite <- X, last_last. reflexivity.
Qed.

(* Every operation keeps the management floor within the budget. *)
Lemma floor_step s o : floor s <= budget (cfg s) -> floor (fst (step s o)) <= budget (cfg s).
Proof.
  intro F. destruct o; cbn [step].
  - destruct k; try exact F; apply floor_plain; exact F.
  - unfold reg_call. destruct (pending s) eqn:Pn; [|exact F]. destruct ids; [exact F|].
    destruct (negb _); [exact F|].
    destruct (keep_pending (cfg s) && _) eqn:K; [exact F|]. cbn [fst].
    unfold floor in *. rewrite (tail_need_nil s Pn) in F.
    unfold pinned_cost in *. cbn [cfg with_dash with_counts with_turns with_pending] in *.
    rewrite pinned_with_dash, pinned_with_counts, pinned_with_pending.
    rewrite (pinned_msgs_app s _
      (mkBlock (S (nblocks s)) KCall data 0 (n :: ids) (c, c) (0, 0) 0 false Visible None 0 (0, 0) 0))
      by (rewrite blocks_snoc; reflexivity).
    cbn [b_status]. rewrite app_nil_r.
    unfold tail_need, tail_on, tail_msgs, tail_on. cbn [cfg pending with_dash with_counts with_pending with_turns].
    destruct (keep_pending (cfg s)) eqn:KP; cbn [andb] in *; [|lia].
    apply Bool.negb_false_iff, Nat.leb_le in K.
    rewrite (last_turn_msgs_snoc _ (turns s) (TC (mkBlock (S (nblocks s)) KCall data 0 (n :: ids) (c, c) (0, 0) 0 false Visible None 0 (0, 0) 0) [])) by reflexivity.
    assert (NE : exists q r, combine (n :: ids) (pend ++ repeat 0 (length (n :: ids))) = q :: r)
      by (destruct pend; cbn; eauto).
    destruct NE as [q [r E]]. rewrite E in *. cbn iota.
    rewrite costs_app, pending_costs. cbn [pending with_dash with_counts with_pending with_turns].
    replace (costs (turn_msgs _ (TC (mkBlock (S (nblocks s)) KCall data 0 (n :: ids) (c, c) (0, 0) 0 false Visible None 0 (0, 0) 0) [])))
      with c by (unfold costs, sum; cbn; lia).
    unfold pinned_cost in *. lia.
  - unfold reg_result. destruct (negb _ ) eqn:N; [exact F|].
    destruct (decide _ _ _ _) as [g off]. cbn [fst]. wf_split; [|exact F].
    rewrite floor_with_dash in *. apply Nat.leb_le. assumption.
  - unfold act. destruct (resolve s AArchive us); [|exact F].
    wf_split; [|exact F]. rewrite floor_with_dash in *. apply Nat.leb_le. assumption.
  - unfold act. destruct (resolve s ARestore us); [|exact F].
    wf_split; [|exact F]. rewrite floor_with_dash in *. apply Nat.leb_le. assumption.
  - unfold act. destruct (resolve s ADelete us); [|exact F].
    wf_split; [|exact F]. rewrite floor_with_dash in *. apply Nat.leb_le. assumption.
  - destruct (find_block s n); [destruct (recover s n)|]; exact F.
  - exact F.
Qed.

Lemma floor_run s os : floor s <= budget (cfg s) -> floor (run s os) <= budget (cfg s).
Proof.
  revert s; induction os as [|o os IH]; intros s F; simpl; auto.
  rewrite <- (cfg_step s o). apply IH. rewrite cfg_step. apply floor_step; exact F.
Qed.

Lemma floor_init c d s : init c d = Some s -> floor s <= budget c.
Proof.
  unfold init. destruct (fixed c + mgmt c <=? budget c) eqn:L; intro H; inversion H; subst.
  apply Nat.leb_le in L. unfold floor. rewrite tail_need_nil by reflexivity.
  unfold pinned_cost, pinned_msgs, blocks, costs, sum. simpl. lia.
Qed.

(* The management rendering's prefix (cache_prefix): what it costs beside
   the pinned blocks, and that the cut keeps it within the room. *)
Lemma sum_map_plus {A} (f g : A -> nat) l : sum (map (fun x => f x + g x) l) = sum (map f l) + sum (map g l).
Proof. induction l as [|x l IH]; [reflexivity|]. cbn [map]. rewrite !sum_cons, IH. lia. Qed.

Lemma pos_plain s tf b : is_result b = false -> pos_msgs s tf b = pos_msgs s false b.
Proof. intro H. unfold pos_msgs. rewrite H. reflexivity. Qed.

Lemma pin_part_le s tf b :
  costs (pin_part (b, pos_msgs s tf b)) <=
  costs (match b_status b with Pinned => pos_msgs s false b | _ => [] end).
Proof.
  unfold pin_part, pinned_plain. cbn [fst snd]. destruct (b_status b); try (cbn; lia).
  destruct (is_result b) eqn:R; cbn [negb]; [unfold costs, sum; cbn; lia|].
  rewrite (pos_plain s tf b R). lia.
Qed.

Lemma positions_pinned s : costs (flat_map pin_part (positions s)) <= pinned_cost s.
Proof.
  unfold positions, pinned_cost, pinned_msgs, blocks. induction (turns s) as [|t ts IH]; [cbn; lia|].
  cbn [flat_map]. rewrite !flat_map_app, !costs_app.
  enough (costs (flat_map pin_part (turn_positions s t)) <=
          costs (flat_map (fun b => match b_status b with Pinned => pos_msgs s false b | _ => [] end)
                   (turn_blocks t))) by lia.
  destruct t as [b|c rs]; cbn [turn_positions turn_blocks flat_map]; rewrite ?costs_app.
  { pose proof (pin_part_le s false b). cbn. lia. }
  pose proof (pin_part_le s false c).
  enough (costs (flat_map pin_part (map (fun r => (r, pos_msgs s (in_prompt (b_status c)) r)) rs)) <=
          costs (flat_map (fun b => match b_status b with Pinned => pos_msgs s false b | _ => [] end) rs))
    by lia.
  induction rs as [|r rs IHr]; [cbn; lia|]. cbn [map flat_map]. rewrite !costs_app.
  pose proof (pin_part_le s (in_prompt (b_status c)) r). lia.
Qed.

Lemma shown_prefix_cost s k :
  costs (shown_prefix s k) <= sum (map wcost (firstn k (positions s))) + pinned_cost s.
Proof.
  unfold shown_prefix. pose proof (positions_pinned s) as P.
  set (ps := positions s) in *.
  rewrite <- (firstn_skipn k ps) in P. rewrite flat_map_app, costs_app in P.
  rewrite costs_app, !costs_flat_map in *.
  replace (map (fun x => costs (snd x)) (firstn k ps))
    with (map (fun x => wcost x + costs (pin_part x)) (firstn k ps)).
  - rewrite sum_map_plus. lia.
  - apply map_ext. intros [b ms]. unfold wcost, pin_part. cbn [fst snd].
    destruct (pinned_plain b); unfold costs, sum; cbn; lia.
Qed.

Lemma back_le f : forall k p, back f k p <= k.
Proof.
  induction f as [|f IH]; intros k p; simpl; [lia|].
  destruct (_ && _); [specialize (IH (k - 1) p); lia|lia].
Qed.

Lemma fit_room ps : forall room, sum (map wcost (firstn (fit room ps) ps)) <= room.
Proof.
  induction ps as [|p ps IH]; intro room; cbn [fit]; [unfold sum; simpl; lia|].
  destruct (Nat.leb_spec (wcost p) room); cbn [firstn map]; [|unfold sum; simpl; lia].
  rewrite sum_cons. specialize (IH (room - wcost p)). lia.
Qed.

Lemma firstn_sum_mono ps : forall k k', k <= k' ->
  sum (map wcost (firstn k ps)) <= sum (map wcost (firstn k' ps)).
Proof.
  induction ps as [|p ps IH]; intros k k' L.
  - rewrite !firstn_nil. lia.
  - destruct k as [|k]; [cbn [firstn map]; unfold sum at 1; cbn [fold_right]; lia|].
    destruct k' as [|k']; [lia|]. cbn [firstn map]. rewrite !sum_cons.
    specialize (IH k k' ltac:(lia)). lia.
Qed.

Lemma cut_room s room : sum (map wcost (firstn (prefix_cut s room) (positions s))) <= room.
Proof.
  eapply Nat.le_trans; [|exact (fit_room (positions s) room)].
  apply firstn_sum_mono. unfold prefix_cut.
  match goal with |- back ?f ?k ?p <= _ => pose proof (back_le f k p) end.
  destruct (pending s); lia.
Qed.

(* The rendering's tokens: within B in normal mode by preflight, within the
   floor in management mode (its dashboard is at most the bound the floor
   reserves; with cache_prefix the prefix fits the room beside it). *)
Lemma kp_back_le s k : kp_back s k <= k.
Proof. unfold kp_back. destruct (_ && _); [apply back_le|lia]. Qed.

Lemma tail_need_ge s : costs (tail_msgs s) <= tail_need s.
Proof. unfold tail_need, tail_msgs. destruct (tail_on s); cbn; lia. Qed.

Lemma tokens_bound s : floor s <= budget (cfg s) -> tokens s <= budget (cfg s).
Proof.
  unfold tokens, render. intro F. destruct (mode_of s) eqn:M.
  - apply mode_normal in M. rewrite total_is_rendering_cost in M. exact M.
  - unfold management_render. rewrite !costs_app. unfold floor in F.
    pose proof (tail_need_ge s) as T.
    replace (costs [dash_msg (mdash_cost s)]) with (mdash_cost s) by (unfold costs, sum; simpl; lia).
    assert (D : mdash_cost s <= mgmt (cfg s)) by (unfold mdash_cost; lia).
    destruct (cache_prefix (cfg s)).
    + pose proof (shown_prefix_cost s (management_cut s)).
      pose proof (cut_room s (budget (cfg s) - (fixed (cfg s) + pinned_cost s + costs (tail_msgs s) + mdash_cost s))).
      pose proof (firstn_sum_mono (positions s) _ _ (kp_back_le s (prefix_cut s
        (budget (cfg s) - (fixed (cfg s) + pinned_cost s + costs (tail_msgs s) + mdash_cost s))))).
      unfold management_cut in *. unfold pinned_cost in *. lia.
    + unfold pinned_cost in F. lia.
Qed.

Lemma run_cfg c d s0 os : init c d = Some s0 -> cfg (run s0 os) = c.
Proof. intro I. rewrite cfg_run. exact (cfg_init c d s0 I). Qed.

(* ------------------------------------------------------------------ *)
(* Stable IDs *)

Definition keeps_regs (f : block -> block) : Prop := forall b, registered (f b) = registered b.

Ltac keepreg :=
  let b := fresh "b" in intro b;
  repeat match goal with
         | |- context [if ?c then _ else _] => destruct c
         | |- context [match ?x with _ => _ end] => destruct x
         end; reflexivity.

Lemma regs_update s f : keeps_regs f -> regs (update s f) = regs s.
Proof.
  intro K. unfold regs. rewrite blocks_update, map_map. apply map_ext.
  intro b. destruct (protected s b); auto.
Qed.

Lemma regs_offload_all xs s : regs (offload_all s xs) = regs s.
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intro s; simpl; auto.
  rewrite IH. unfold offload_block; cbv zeta.
  destruct (find_block s x); apply regs_update; keepreg.
Qed.

Lemma regs_archive s us h st : regs (archive_units s us h st) = regs s.
Proof.
  unfold archive_units, new_group. cbv zeta.
  destruct us as [|[n|g] [|u r]];
  try (destruct (find_block s n) as [b|]; [destruct (in_prompt (b_status b))|]);
  try (destruct (find_group s g)); try reflexivity;
  try (apply regs_update; keepreg);
  try (unfold regs, with_store, with_counts, with_groups, blocks; cbn [turns];
       apply (regs_update s); keepreg).
Qed.

Lemma regs_restore us s : regs (fold_left restore_unit us s) = regs s.
Proof.
  revert s; induction us as [|u us IH]; intro s; simpl; auto. rewrite IH.
  destruct u; unfold restore_unit; cbv zeta;
  unfold regs, with_store, with_groups, blocks; cbn [turns]; apply (regs_update s); keepreg.
Qed.

Lemma regs_delete us s : regs (fold_left delete_unit us s) = regs s.
Proof.
  revert s; induction us as [|u us IH]; intro s; simpl; auto. rewrite IH.
  destruct u; unfold delete_unit; cbv zeta;
  unfold regs, with_store, with_groups, blocks; cbn [turns]; apply (regs_update s); keepreg.
Qed.

Lemma seq_snoc a n : seq a (S n) = seq a n ++ [a + n].
Proof. rewrite <- Nat.add_1_r, seq_app. reflexivity. Qed.

Definition ids_ok (s : state) : Prop := map b_id (blocks s) = seq 1 (nblocks s).

Lemma ids_of_regs s s' : regs s' = regs s -> map b_id (blocks s') = map b_id (blocks s).
Proof.
  unfold regs. intro E.
  assert (map (fun r => fst (fst (fst (fst r)))) (map registered (blocks s')) =
          map (fun r => fst (fst (fst (fst r)))) (map registered (blocks s))) by (rewrite E; auto).
  rewrite !map_map in H. exact H.
Qed.

Lemma blocks_with_dash s d : blocks (with_dash s d) = blocks s. Proof. reflexivity. Qed.
Lemma blocks_with_counts s a b : blocks (with_counts s a b) = blocks s. Proof. reflexivity. Qed.
Lemma blocks_with_pending s p o : blocks (with_pending s p o) = blocks s. Proof. reflexivity. Qed.
Lemma nblocks_with_dash s d : nblocks (with_dash s d) = nblocks s. Proof. reflexivity. Qed.
Lemma nblocks_with_counts s a b : nblocks (with_counts s a b) = a. Proof. reflexivity. Qed.
Lemma nblocks_with_pending s p o : nblocks (with_pending s p o) = nblocks s. Proof. reflexivity. Qed.
Lemma nblocks_with_turns s t : nblocks (with_turns s t) = nblocks s. Proof. reflexivity. Qed.
Lemma regs_with_dash s d : regs (with_dash s d) = regs s. Proof. reflexivity. Qed.
Lemma regs_with_counts s a b : regs (with_counts s a b) = regs s. Proof. reflexivity. Qed.
Lemma regs_with_pending s p o : regs (with_pending s p o) = regs s. Proof. reflexivity. Qed.

#[export] Hint Rewrite blocks_with_dash blocks_with_counts blocks_with_pending nblocks_with_dash
  nblocks_with_counts nblocks_with_pending nblocks_with_turns regs_with_dash
  regs_with_counts regs_with_pending : st.

Lemma nblocks_offload_all xs s : nblocks (offload_all s xs) = nblocks s.
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intro s; simpl; auto.
  rewrite IH. unfold offload_block; cbv zeta. destruct (find_block s x); reflexivity.
Qed.

Lemma nblocks_archive s us h st : nblocks (archive_units s us h st) = nblocks s.
Proof.
  unfold archive_units, new_group; cbv zeta. destruct us as [|[n|g] [|u r]];
  try (destruct (find_block s n) as [b|]; [destruct (in_prompt (b_status b))|]);
  try (destruct (find_group s g)); reflexivity.
Qed.

Lemma nblocks_restore us s : nblocks (fold_left restore_unit us s) = nblocks s.
Proof. revert s; induction us as [|u l IH]; intro s; simpl; auto. rewrite IH. destruct u; reflexivity. Qed.

Lemma nblocks_delete us s : nblocks (fold_left delete_unit us s) = nblocks s.
Proof. revert s; induction us as [|u l IH]; intro s; simpl; auto. rewrite IH. destruct u; reflexivity. Qed.

Ltac unchanged I := split; [exact I | exists []; rewrite app_nil_r; reflexivity].

(* Every operation keeps every registered block's meaning and only appends
   blocks, numbered on from the last. *)
Lemma stable_step s o :
  ids_ok s ->
  ids_ok (fst (step s o)) /\ exists fresh, regs (fst (step s o)) = regs s ++ fresh.
Proof.
  unfold ids_ok. intro I. destruct o; cbn [step].
  - destruct k; try unchanged I; unfold reg_plain; destruct (pending s); try unchanged I;
    destruct (_ && _); cbn [fst]; try unchanged I;
    (split; [|eexists; unfold regs; autorewrite with st; rewrite blocks_snoc, map_app; reflexivity]);
    autorewrite with st; rewrite blocks_snoc, map_app, I, seq_snoc; reflexivity.
  - unfold reg_call. destruct (pending s); try unchanged I.
    destruct ids; try unchanged I. destruct (negb _); cbn [fst]; try unchanged I.
    destruct (keep_pending (cfg s) && _); cbn [fst]; try unchanged I.
    split; [|eexists; unfold regs; autorewrite with st; rewrite blocks_snoc, map_app; reflexivity].
    autorewrite with st. rewrite blocks_snoc, map_app, I, seq_snoc; reflexivity.
  - unfold reg_result. destruct (negb _ ) eqn:N; try unchanged I.
    destruct (decide _ _ _ _) as [g off]. cbn [fst]. wf_split; [|unchanged I].
    apply Bool.negb_false_iff, andb_true_iff in N. destruct N as [_ N].
    assert (R := regs_offload_all off s).
    match goal with |- context [with_turns ?s2 (add_result (turns ?s2) ?r)] =>
      assert (H : blocks (with_turns s2 (add_result (turns s2) r)) = blocks s2 ++ [r])
        by (unfold blocks at 1, with_turns; cbn [turns]; apply blocks_add_result;
            apply last_is_call_offload_all; exact N) end.
    autorewrite with st. split.
    + rewrite H, map_app, (ids_of_regs _ _ R), I, seq_snoc.
      rej; reflexivity.
    + eexists. unfold regs at 1. rewrite H, map_app. fold (regs (offload_all s off)). rewrite R. reflexivity.
  - unfold act. destruct (resolve s AArchive us); try unchanged I.
    cbn [fst]. wf_split; [|unchanged I]. assert (R := regs_archive s l h stubs). autorewrite with st. split.
    + rewrite (ids_of_regs _ _ R), I, nblocks_archive. reflexivity.
    + exists []. rewrite app_nil_r. exact R.
  - unfold act. destruct (resolve s ARestore us); try unchanged I.
    cbn [fst]. wf_split; [|unchanged I]. assert (R := regs_restore l s). autorewrite with st. split.
    + rewrite (ids_of_regs _ _ R), I, nblocks_restore. reflexivity.
    + exists []. rewrite app_nil_r. exact R.
  - unfold act. destruct (resolve s ADelete us); try unchanged I.
    cbn [fst]. wf_split; [|unchanged I]. assert (R := regs_delete l s). autorewrite with st. split.
    + rewrite (ids_of_regs _ _ R), I, nblocks_delete. reflexivity.
    + exists []. rewrite app_nil_r. exact R.
  - destruct (find_block s n); [destruct (recover s n)|]; unchanged I.
  - unchanged I.
Qed.

(* Groups: a group ID keeps its members; new groups get IDs above every one used. *)
Definition gsub (l l' : list group) : Prop :=
  forall x', In x' l' -> exists x, In x l /\ gmeaning x = gmeaning x'.

Lemma gsub_refl l : gsub l l.
Proof. intros x H. exists x; auto. Qed.

Lemma gsub_trans a b c : gsub a b -> gsub b c -> gsub a c.
Proof.
  intros H1 H2 x Hx. destruct (H2 x Hx) as [y [Hy Ey]]. destruct (H1 y Hy) as [z [Hz Ez]].
  exists z; split; congruence.
Qed.

Lemma gsub_map l f : (forall x, gmeaning (f x) = gmeaning x) -> gsub l (map f l).
Proof. intros F x Hx. apply in_map_iff in Hx. destruct Hx as [y [<- Hy]]. exists y; auto. Qed.

Lemma gsub_filter l p : gsub l (filter p l).
Proof. intros x Hx. apply filter_In in Hx. exists x; tauto. Qed.

Ltac gmean := let x := fresh "x" in intro x;
  repeat match goal with
         | |- context [if ?c then _ else _] => destruct c
         | |- context [match ?y with _ => _ end] => destruct y
         end; reflexivity.

Definition gids_ok (s : state) : Prop := forall x, In x (groups s) -> g_id x <= ngroups s.

Definition gstep (s s' : state) : Prop :=
  ngroups s <= ngroups s' /\
  forall x', In x' (groups s') -> (exists x, In x (groups s) /\ gmeaning x = gmeaning x')
                                  \/ ngroups s < g_id x' <= ngroups s'.

Lemma gstep_same s s' : groups s' = groups s -> ngroups s' = ngroups s -> gstep s s'.
Proof. intros G N. split; [lia|]. intros x Hx. left. exists x. rewrite <- G. auto. Qed.

Lemma gstep_sub s s' : gsub (groups s) (groups s') -> ngroups s' = ngroups s -> gstep s s'.
Proof. intros G N. split; [lia|]. intros x Hx. left. apply G; auto. Qed.

Lemma groups_offload_all xs s : groups (offload_all s xs) = groups s /\ ngroups (offload_all s xs) = ngroups s.
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intro s; simpl; auto.
  destruct (IH (offload_block s x)) as [A B]. rewrite A, B.
  unfold offload_block; cbv zeta. destruct (find_block s x); auto.
Qed.

Lemma gstep_restore us s : gstep s (fold_left restore_unit us s).
Proof.
  revert s; induction us as [|u us IH]; intro s; simpl.
  - apply gstep_same; auto.
  - assert (G : gstep s (restore_unit s u)).
    { destruct u; unfold restore_unit; cbv zeta; [apply gstep_same; auto|].
      apply gstep_sub; [|reflexivity]. cbn [groups with_store with_groups].
      eapply gsub_trans; [apply (gsub_filter _ (fun x => negb (g_id x =? n)))|].
      apply gsub_map. gmean. }
    destruct G as [G1 G2]. destruct (IH (restore_unit s u)) as [H1 H2]. split; [lia|].
    intros x Hx. destruct (H2 x Hx) as [[y [Hy Ey]]|L]; [|right; lia].
    destruct (G2 y Hy) as [[z [Hz Ez]]|L]; [left; exists z; split; congruence|].
    right. unfold gmeaning in Ey. inversion Ey. lia.
Qed.

Lemma gstep_delete us s : gstep s (fold_left delete_unit us s).
Proof.
  revert s; induction us as [|u us IH]; intro s; simpl.
  - apply gstep_same; auto.
  - assert (G : gstep s (delete_unit s u)).
    { destruct u; unfold delete_unit; cbv zeta; [apply gstep_same; auto|].
      apply gstep_sub; [|reflexivity]. apply gsub_filter. }
    destruct G as [G1 G2]. destruct (IH (delete_unit s u)) as [H1 H2]. split; [lia|].
    intros x Hx. destruct (H2 x Hx) as [[y [Hy Ey]]|L]; [|right; lia].
    destruct (G2 y Hy) as [[z [Hz Ez]]|L]; [left; exists z; split; congruence|].
    right. unfold gmeaning in Ey. inversion Ey. lia.
Qed.

Lemma gstep_archive s us h st : gstep s (archive_units s us h st).
Proof.
  unfold archive_units, new_group; cbv zeta.
  destruct us as [|[n|g] [|u r]];
  try (destruct (find_block s n) as [b|]; [destruct (in_prompt (b_status b))|]);
  try (destruct (find_group s g));
  try (apply gstep_same; reflexivity).
  all: try (apply gstep_sub; [apply gsub_map; gmean | reflexivity]).
  all: split; cbn [ngroups with_counts]; [lia|]; intros x Hx;
       cbn [groups with_counts with_store with_groups] in Hx;
       apply in_app_iff in Hx; destruct Hx as [Hx|[<-|[]]];
       [left | right; cbn [g_id ngroups with_counts]; lia];
       refine (gsub_map (groups s) _ _ x Hx); gmean.
Qed.

Lemma gstep_step s o : gstep s (fst (step s o)).
Proof.
  destruct o; cbn [step].
  - destruct k; try (apply gstep_same; reflexivity); unfold reg_plain; destruct (pending s);
    try (apply gstep_same; reflexivity); destruct (_ && _); apply gstep_same; reflexivity.
  - unfold reg_call. destruct (pending s); try (apply gstep_same; reflexivity).
    destruct ids; try (apply gstep_same; reflexivity). destruct (negb _); try (apply gstep_same; reflexivity).
    destruct (_ && _); apply gstep_same; reflexivity.
  - unfold reg_result. destruct (negb _ ); try (apply gstep_same; reflexivity).
    destruct (decide _ _ _ _) as [g off]. cbn [fst]. wf_split; [|apply gstep_same; reflexivity]. destruct (groups_offload_all off s) as [A B].
    apply gstep_same; [exact A | reflexivity].
  - unfold act. destruct (resolve s AArchive us); [|apply gstep_same; reflexivity].
    wf_split; [apply gstep_archive|apply gstep_same; reflexivity].
  - unfold act. destruct (resolve s ARestore us); [|apply gstep_same; reflexivity].
    wf_split; [apply gstep_restore|apply gstep_same; reflexivity].
  - unfold act. destruct (resolve s ADelete us); [|apply gstep_same; reflexivity].
    wf_split; [apply gstep_delete|apply gstep_same; reflexivity].
  - destruct (find_block s n); [destruct (recover s n)|]; apply gstep_same; reflexivity.
  - apply gstep_same; reflexivity.
Qed.

Lemma gids_step s o : gids_ok s -> gids_ok (fst (step s o)).
Proof.
  intros G x Hx. destruct (gstep_step s o) as [N S]. destruct (S x Hx) as [[y [Hy E]]|L]; [|lia].
  unfold gmeaning in E. inversion E. specialize (G y Hy). lia.
Qed.

Lemma run_invariant (P : state -> Prop) s os :
  P s -> (forall s o, P s -> P (fst (step s o))) -> P (run s os).
Proof. revert s; induction os as [|o os IH]; intros s H K; simpl; auto. Qed.

Lemma init_fresh c d s : init c d = Some s -> ids_ok s /\ gids_ok s.
Proof.
  unfold init. destruct (_ <=? _); intro H; inversion H; subst.
  split; [reflexivity | intros x []].
Qed.

(* ------------------------------------------------------------------ *)
(* Protocol: the OpenAI pairing rule *)

Definition plainr (x : role) : bool :=
  match x with RTool _ | RCalls _ => false | _ => true end.

Lemma plain_pass rs r : forallb plainr rs = true -> openai_ok [] (rs ++ r) = openai_ok [] r.
Proof.
  induction rs as [|x rs IH]; simpl; auto. intro H. apply andb_true_iff in H. destruct H as [H1 H2].
  destruct x; try discriminate; rewrite IH; auto.
Qed.

Lemma remove_first_perm i l : In i l -> Permutation l (i :: remove_first i l).
Proof.
  induction l as [|x l IH]; simpl; [intros []|]. intro H.
  destruct (Nat.eqb_spec x i).
  - subst. reflexivity.
  - destruct H as [H|H]; [congruence|]. rewrite (IH H) at 1. apply perm_swap.
Qed.

Lemma nodupb_NoDup l : nodupb l = true <-> NoDup l.
Proof.
  induction l as [|x l IH]; simpl.
  - split; auto. constructor.
  - rewrite andb_true_iff, IH, negb_true_iff. split.
    + intros [H1 H2]. constructor; auto. intro Hin.
      assert (existsb (Nat.eqb x) l = true) by (apply existsb_exists; exists x; split; auto; apply Nat.eqb_refl).
      congruence.
    + intro H. inversion H; subst. split; auto.
      destruct (existsb (Nat.eqb x) l) eqn:E; auto. apply existsb_exists in E.
      destruct E as [y [Hy Ey]]. apply Nat.eqb_eq in Ey. subst. contradiction.
Qed.

Lemma tools_close l ids r :
  NoDup ids -> Permutation ids l -> openai_ok ids (map RTool l ++ r) = openai_ok [] r.
Proof.
  revert ids. induction l as [|i l IH]; intros ids N P; simpl.
  - apply Permutation_sym, Permutation_nil in P. subst. reflexivity.
  - assert (In i ids) by (apply (Permutation_in i (Permutation_sym P)); left; auto).
    assert (E : existsb (Nat.eqb i) ids = true)
      by (apply existsb_exists; exists i; split; auto; apply Nat.eqb_refl).
    rewrite E. simpl.
    pose proof (remove_first_perm i ids H) as R.
    apply IH.
    + apply (Permutation_NoDup R) in N. inversion N; auto.
    + apply Permutation_cons_inv with (a := i). rewrite <- R. exact P.
Qed.

(* What each position renders to, by role. *)
Lemma roles_result_tool s r :
  b_kind r = KResult -> map m_role (pos_msgs s true r) = [RTool (b_cid r)].
Proof.
  intro K. unfold pos_msgs, is_result. rewrite K. cbn [andb].
  destruct (b_status r); try reflexivity; try (destruct (b_rej r); reflexivity);
  destruct (b_group r); try reflexivity;
  destruct (top_group s n); try reflexivity;
  destruct (first_leaf g =? b_id r); reflexivity.
Qed.

Lemma roles_result_user s r :
  b_kind r = KResult -> forallb plainr (map m_role (pos_msgs s false r)) = true.
Proof.
  intro K. unfold pos_msgs, is_result. rewrite K. cbn [andb].
  destruct (b_status r); try reflexivity; try (destruct (b_rej r); reflexivity);
  destruct (b_group r); try reflexivity;
  destruct (top_group s n); try reflexivity;
  destruct (first_leaf g =? b_id r); reflexivity.
Qed.

Lemma roles_plain s tf b :
  b_kind b <> KCall -> b_kind b <> KResult -> forallb plainr (map m_role (pos_msgs s tf b)) = true.
Proof.
  intros K1 K2. unfold pos_msgs, is_result, is_call.
  destruct (b_kind b); try congruence; cbn [andb];
  destruct (b_status b); try reflexivity;
  destruct (b_group b); try reflexivity;
  destruct (top_group s n); try reflexivity;
  destruct (first_leaf g =? b_id b); reflexivity.
Qed.

Lemma roles_call_out s tf c :
  b_kind c = KCall -> in_prompt (b_status c) = false ->
  forallb plainr (map m_role (pos_msgs s tf c)) = true.
Proof.
  intros K P. unfold pos_msgs, is_result, is_call. rewrite K. cbn [andb].
  destruct (b_status c); try discriminate;
  destruct (b_group c); try reflexivity;
  destruct (top_group s n); try reflexivity;
  destruct (first_leaf g =? b_id c); reflexivity.
Qed.

Lemma roles_call_in s tf c :
  b_kind c = KCall -> b_status c = Visible -> map m_role (pos_msgs s tf c) = [RCalls (b_calls c)].
Proof. intros K P. unfold pos_msgs, is_result, is_call. rewrite K, P. reflexivity. Qed.

(* The conversation's shape: a tool-call block has distinct, non-empty call
   ids, is never pinned, and is followed by results that answer its calls
   (all of them, except in the last turn, whose unanswered calls are the
   pending ones and whose call block is then in the prompt). *)
Definition cids (rs : list block) : list nat := map b_cid rs.

Definition turn_ok (t : turn) (pend : list nat) (own : nat) : Prop :=
  match t with
  | TP b => b_kind b <> KCall /\ b_kind b <> KResult /\ pend = []
  | TC c rs =>
      b_kind c = KCall /\ b_status c <> Pinned /\ NoDup (b_calls c) /\ b_calls c <> [] /\
      Forall (fun r => b_kind r = KResult) rs /\
      Permutation (b_calls c) (cids rs ++ pend) /\
      (pend <> [] -> b_status c = Visible /\ b_id c = own)
  end.

Fixpoint turns_ok (ts : list turn) (pend : list nat) (own : nat) : Prop :=
  match ts with
  | [] => pend = []
  | [t] => turn_ok t pend own
  | t :: ts' => turn_ok t [] own /\ turns_ok ts' pend own
  end.

Definition proto_inv (s : state) : Prop := turns_ok (turns s) (map fst (pending s)) (owner s).

(* The ordinary rendering is protocol-valid. *)
Lemma turn_pass s t own r :
  turn_ok t [] own -> openai_ok [] (map m_role (turn_msgs s t) ++ r) = openai_ok [] r.
Proof.
  destruct t as [b|c rs]; simpl.
  - intros [K1 [K2 _]]. apply plain_pass, roles_plain; auto.
  - intros [K [NP [N [NE [F [P _]]]]]]. rewrite map_app, <- app_assoc.
    destruct (in_prompt (b_status c)) eqn:IP.
    + assert (V : b_status c = Visible) by (destruct (b_status c); try discriminate; auto; contradiction).
      rewrite (roles_call_in s false c K V).
      assert (R : map m_role (flat_map (pos_msgs s true) rs) = map RTool (cids rs)).
      { clear -F. induction rs as [|x rs IH]; simpl; auto. inversion F; subst.
        rewrite map_app, (roles_result_tool s x H1), IH; auto. }
      rewrite R. destruct (b_calls c) as [|i ids] eqn:E; [contradiction|].
      cbn [app openai_ok].
      assert (Nb : nodupb (i :: ids) = true) by (apply nodupb_NoDup; exact N).
      rewrite Nb. cbn [andb].
      apply tools_close; [exact N | rewrite app_nil_r in P; exact P].
    + rewrite plain_pass by (apply roles_call_out; auto).
      apply plain_pass. clear -F. induction rs as [|x rs IH]; simpl; auto. inversion F; subst.
      rewrite map_app, forallb_app, roles_result_user, IH; auto.
Qed.

Lemma last_turn_ok s t pend own :
  turn_ok t pend own ->
  openai_ok [] (map m_role (turn_msgs s t) ++ map RTool pend ++ [RUser]) = true.
Proof.
  destruct t as [b|c rs]; simpl.
  - intros [K1 [K2 E]]. subst. rewrite plain_pass by (apply roles_plain; auto). reflexivity.
  - intros [K [NP [N [NE [F [P O]]]]]]. rewrite map_app, <- app_assoc.
    destruct (in_prompt (b_status c)) eqn:IP.
    + assert (V : b_status c = Visible) by (destruct (b_status c); try discriminate; auto; contradiction).
      rewrite (roles_call_in s false c K V).
      assert (R : map m_role (flat_map (pos_msgs s true) rs) = map RTool (cids rs)).
      { clear -F. induction rs as [|x rs IH]; simpl; auto. inversion F; subst.
        rewrite map_app, (roles_result_tool s x H1), IH; auto. }
      rewrite R. destruct (b_calls c) as [|i ids] eqn:E; [contradiction|].
      cbn [app openai_ok].
      assert (Nb : nodupb (i :: ids) = true) by (apply nodupb_NoDup; exact N).
      rewrite Nb. cbn [andb].
      rewrite app_assoc, <- map_app.
      rewrite tools_close; [reflexivity|exact N|exact P].
    + destruct pend as [|p pend].
      * rewrite plain_pass by (apply roles_call_out; auto).
        rewrite plain_pass; [reflexivity|].
        clear -F. induction rs as [|x rs IH]; simpl; auto. inversion F; subst.
        rewrite map_app, forallb_app, roles_result_user, IH; auto.
      * destruct (O ltac:(discriminate)) as [V _]. rewrite V in IP. discriminate.
Qed.

Lemma turns_render s ts pend own :
  turns_ok ts pend own ->
  openai_ok [] (map m_role (flat_map (turn_msgs s) ts) ++ map RTool pend ++ [RUser]) = true.
Proof.
  induction ts as [|t ts IH]; intro H.
  - simpl in H. subst. reflexivity.
  - destruct ts as [|t' ts'].
    + simpl. rewrite app_nil_r. apply last_turn_ok with (own := own). exact H.
    + destruct H as [H1 H2]. cbn [flat_map]. rewrite map_app, <- app_assoc.
      rewrite turn_pass with (own := own); auto.
Qed.

Lemma normal_render_valid s : proto_inv s -> openai_valid (normal_render s).
Proof.
  unfold proto_inv, openai_valid, normal_render. intro H.
  rewrite !map_app. unfold pending_msgs. rewrite map_map.
  replace (map (fun x => m_role (mkMsg (PPending (fst x)) FPending (RTool (fst x)) (snd x) SNone)) (pending s))
    with (map RTool (map fst (pending s))) by (rewrite map_map; reflexivity).
  apply turns_render with (own := owner s). exact H.
Qed.

Lemma calls_not_pinned ts pend own :
  turns_ok ts pend own ->
  forall b, In b (flat_map turn_blocks ts) -> b_status b = Pinned -> b_kind b <> KCall.
Proof.
  induction ts as [|t ts IH]; intros H b Hb P; simpl in Hb; [contradiction|].
  assert (T : exists q, turn_ok t q own /\ (ts <> [] -> turns_ok ts pend own)).
  { destruct ts; [exists pend; split; auto; congruence|]. destruct H as [H1 H2]. exists []; auto. }
  destruct T as [q [T1 T2]].
  apply in_app_iff in Hb. destruct Hb as [Hb|Hb].
  - destruct t as [x|c rs]; simpl in Hb, T1.
    + destruct Hb as [<-|[]]. tauto.
    + destruct T1 as [K [NP [_ [_ [F _]]]]]. destruct Hb as [<-|Hb]; [congruence|].
      rewrite Forall_forall in F. rewrite (F b Hb). discriminate.
  - destruct ts; [contradiction|]. apply (IH (T2 ltac:(discriminate)) b Hb P).
Qed.

Lemma pinned_render_valid s :
  proto_inv s -> openai_ok [] (map m_role (pinned_msgs s ++ [dash_msg (mdash_cost s)])) = true.
Proof.
  unfold proto_inv, pinned_msgs. intro H.
  rewrite map_app. rewrite plain_pass; [reflexivity|].
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

(* The open calls after a run of roles (None: already invalid). *)
Fixpoint open_after (open : list nat) (rs : list role) : option (list nat) :=
  match rs with
  | [] => Some open
  | RTool i :: r => if existsb (Nat.eqb i) open then open_after (remove_first i open) r else None
  | RCalls ids :: r =>
      match open, ids with
      | [], _ :: _ => if nodupb ids then open_after ids r else None
      | _, _ => None
      end
  | _ :: r => match open with [] => open_after [] r | _ => None end
  end.

Lemma openai_app A : forall open B,
  openai_ok open (A ++ B) = match open_after open A with Some o => openai_ok o B | None => false end.
Proof.
  induction A as [|x A IH]; intros open B; [reflexivity|].
  destruct x as [| | |ids|i]; cbn [app openai_ok open_after].
  - destruct open; [apply IH|reflexivity].
  - destruct open; [apply IH|reflexivity].
  - destruct open; [apply IH|reflexivity].
  - destruct open as [|j o]; [|reflexivity]. destruct ids as [|y ys]; [reflexivity|].
    destruct (nodupb _); [apply IH|reflexivity].
  - destruct (existsb _ _); [apply IH|reflexivity].
Qed.

Lemma open_next o B : openai_ok o B = true -> o <> [] -> exists i r, B = RTool i :: r.
Proof.
  destruct B as [|x B]; destruct o as [|j o]; cbn; intros H N; try congruence;
    destruct x; try discriminate; eauto.
Qed.

Lemma back_spec f : forall k p, k <= f -> back f k p = 0 \/ p (back f k p) = false.
Proof.
  induction f as [|f IH]; intros k p L; cbn [back]; [left; lia|].
  destruct (Nat.ltb_spec 0 k); cbn [andb]; [|left; lia].
  destruct (p k) eqn:E; [apply IH; lia|right; exact E].
Qed.

Lemma positions_msgs s : flat_map snd (positions s) = flat_map (turn_msgs s) (turns s).
Proof.
  unfold positions. induction (turns s) as [|t ts IH]; [reflexivity|].
  cbn [flat_map]. rewrite flat_map_app, IH. f_equal. destruct t as [b|c rs]; cbn; [apply app_nil_r|].
  f_equal. induction rs as [|r rs IHr]; [reflexivity|]. cbn. rewrite IHr. reflexivity.
Qed.

Lemma in_skipn_in {A} k (l : list A) x : In x (skipn k l) -> In x l.
Proof. intro H. rewrite <- (firstn_skipn k l). apply in_or_app. right. exact H. Qed.

Lemma positions_shape s p : In p (positions s) ->
  In (fst p) (blocks s) /\ exists tf, snd p = pos_msgs s tf (fst p).
Proof.
  unfold positions, blocks. intro H. apply in_flat_map in H. destruct H as [t [Ht H]].
  split.
  - apply in_flat_map. exists t. split; [exact Ht|]. destruct t as [b|c rs]; cbn in H |- *.
    + destruct H as [<-|[]]. left. reflexivity.
    + destruct H as [<-|H]; [left; reflexivity|right]. apply in_map_iff in H.
      destruct H as [r [<- Hr]]. exact Hr.
  - destruct t as [b|c rs]; cbn in H.
    + destruct H as [<-|[]]. exists false. reflexivity.
    + destruct H as [<-|H]; [exists false; reflexivity|]. apply in_map_iff in H.
      destruct H as [r [<- Hr]]. exists (in_prompt (b_status c)). reflexivity.
Qed.

(* A cut that is not followed by a tool message (0, or what follows opens
   with another message): the shown prefix leaves no call open, and the
   pinned blocks after it are plain messages. *)
Definition cut_closed (s : state) (k : nat) : Prop :=
  k = 0 \/ opens_tool (flat_map snd (skipn k (positions s)) ++ pending_msgs s) = false.

Lemma prefix_pass s k R : proto_inv s -> cut_closed s k ->
  openai_ok [] (map m_role (shown_prefix s k) ++ R) = openai_ok [] R.
Proof.
  intros H K. pose proof (normal_render_valid s H) as N. unfold openai_valid, normal_render in N.
  rewrite <- positions_msgs in N. unfold cut_closed in K.
  set (ps := positions s) in *.
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
Lemma tail_valid s : proto_inv s ->
  openai_ok [] (map m_role (tail_msgs s ++ [dash_msg (mdash_cost s)])) = true.
Proof.
  intro H. unfold tail_msgs. destruct (tail_on s); [|reflexivity].
  unfold last_turn_msgs, proto_inv in *. destruct (turns s) as [|t0 ts] eqn:E.
  - cbn in H. rewrite !map_app, pending_roles, H. reflexivity.
  - rewrite <- app_assoc, !map_app, pending_roles.
    apply last_turn_ok with (own := owner s). apply turns_ok_last. exact H.
Qed.

Lemma pos_msgs_one s tf b : pos_msgs s tf b = [] \/ exists m, pos_msgs s tf b = [m].
Proof.
  unfold pos_msgs, wrap.
  repeat match goal with
         | |- context [match ?x with _ => _ end] => destruct x
         | |- context [if ?x then _ else _] => destruct x
         end; eauto.
Qed.

Lemma skipn_nth_cons {A} (l : list A) : forall i (p : A),
  nth_error l i = Some p -> skipn i l = p :: skipn (S i) l.
Proof.
  induction l as [|q l IH]; intros i p E; [destruct i; discriminate|].
  destruct i as [|i]; cbn in E |- *; [injection E as <-; reflexivity|]. apply IH. exact E.
Qed.

Lemma back_closed s f : forall k,
  cut_closed s k ->
  cut_closed s (back f k (fun j => match nth_error (positions s) (j - 1) with
                                   | Some p => ends_assistant (snd p)
                                   | None => false end)).
Proof.
  induction f as [|f IH]; intros k K; cbn [back]; [exact K|].
  destruct (Nat.ltb_spec 0 k); cbn [andb]; [|exact K].
  destruct (nth_error (positions s) (k - 1)) as [p|] eqn:E; [|exact K].
  destruct (ends_assistant (snd p)) eqn:A; [|exact K].
  apply IH. right. unfold cut_closed in K.
  assert (Sk : skipn (k - 1) (positions s) = p :: skipn k (positions s)).
  { rewrite (skipn_nth_cons _ _ _ E). f_equal. f_equal. lia. }
  rewrite Sk. cbn [flat_map].
  assert (Hp : In p (positions s)) by (eapply nth_error_In; exact E).
  destruct (positions_shape s p Hp) as [_ [tf Ep]].
  destruct (pos_msgs_one s tf (fst p)) as [Z|[m Z]]; rewrite <- Ep in Z; rewrite Z in *.
  - cbn [app]. destruct K as [K|K]; [lia|exact K].
  - cbn in A |- *. destruct (m_role m); try discriminate; reflexivity.
Qed.

Lemma cut_closed_management s : cut_closed s (management_cut s).
Proof.
  unfold management_cut, kp_back.
  assert (K : forall room, cut_closed s (prefix_cut s room)).
  { intro room. unfold cut_closed, prefix_cut.
    match goal with |- context [back ?f ?k0 ?p] =>
      destruct (back_spec f k0 p (le_n _)) as [E|E]; [left; exact E|right; exact E] end. }
  destruct (_ && _); [apply back_closed|]; apply K.
Qed.

Lemma management_render_valid s : proto_inv s -> openai_valid (management_render s).
Proof.
  intro H. unfold openai_valid, management_render. rewrite map_app.
  destruct (cache_prefix (cfg s)).
  - rewrite prefix_pass by (exact H || apply cut_closed_management). exact (tail_valid s H).
  - rewrite pinned_pass by exact H. exact (tail_valid s H).
Qed.

(* Every operation keeps the conversation's shape. *)
Lemma reg_eq x y :
  registered x = registered y ->
  b_id x = b_id y /\ b_kind x = b_kind y /\ b_cid x = b_cid y /\ b_calls x = b_calls y.
Proof. unfold registered. intro H. inversion H. auto. Qed.

Lemma turn_ok_map t pend own g :
  keeps_regs g -> no_new_pins g ->
  (pend <> [] -> forall b, b_id b = own -> b_status b = Visible -> g b = b) ->
  turn_ok t pend own -> turn_ok (map_turn g t) pend own.
Proof.
  intros R P O. destruct t as [b|c rs]; simpl.
  - destruct (reg_eq _ _ (R b)) as [_ [K _]]. rewrite K. auto.
  - intros [K [NP [N [NE [F [Pm Ow]]]]]].
    destruct (reg_eq _ _ (R c)) as [I1 [K1 [_ C1]]].
    assert (CI : cids (map g rs) = cids rs).
    { unfold cids. rewrite map_map. apply map_ext. intro x. destruct (reg_eq _ _ (R x)) as [_ [_ [E _]]]. auto. }
    rewrite K1, C1, CI. split; [exact K|]. split; [apply P; exact NP|].
    split; [exact N|]. split; [exact NE|]. split.
    + rewrite Forall_forall in *. intros x Hx. apply in_map_iff in Hx. destruct Hx as [y [<- Hy]].
      destruct (reg_eq _ _ (R y)) as [_ [E _]]. rewrite E. auto.
    + split; [exact Pm|]. intro E. destruct (Ow E) as [V Id]. rewrite (O E c Id V). auto.
Qed.

Lemma turns_ok_map ts pend own g :
  keeps_regs g -> no_new_pins g ->
  (pend <> [] -> forall b, b_id b = own -> b_status b = Visible -> g b = b) ->
  turns_ok ts pend own -> turns_ok (map (map_turn g) ts) pend own.
Proof.
  intros R P O. induction ts as [|t ts IH]; simpl; auto.
  destruct ts as [|t' ts'].
  - apply turn_ok_map; auto.
  - intros [H1 H2]. split; [apply turn_ok_map; auto; intro E; congruence|]. apply IH. exact H2.
Qed.

Lemma proto_update s f : keeps_regs f -> no_new_pins f -> proto_inv s -> proto_inv (update s f).
Proof.
  unfold proto_inv. intros R P H. cbn [update with_turns turns pending owner].
  apply turns_ok_map; auto.
  - intro b. destruct (protected s b); auto.
  - intros b Hb. destruct (protected s b); auto.
  - intros E b Id V. unfold protected.
    destruct (pending s) as [|q qs]; [simpl in E; contradiction|].
    rewrite V, Id, Nat.eqb_refl. reflexivity.
Qed.

Lemma proto_fields s s' :
  turns s' = turns s -> pending s' = pending s -> owner s' = owner s -> proto_inv s -> proto_inv s'.
Proof. unfold proto_inv. intros -> -> ->. auto. Qed.

Lemma proto_with_store s st : proto_inv s -> proto_inv (with_store s st). Proof. auto. Qed.
Lemma proto_with_groups s gs : proto_inv s -> proto_inv (with_groups s gs). Proof. auto. Qed.
Lemma proto_with_counts s a b : proto_inv s -> proto_inv (with_counts s a b). Proof. auto. Qed.
Lemma proto_with_dash s d : proto_inv s -> proto_inv (with_dash s d). Proof. auto. Qed.
Lemma proto_update_group s g f : proto_inv s -> proto_inv (update_group s g f). Proof. auto. Qed.

Ltac proto_peel :=
  repeat (apply proto_with_store || apply proto_with_groups || apply proto_with_counts
          || apply proto_with_dash || apply proto_update_group).

Ltac proto_upd H := proto_peel; first [exact H | apply proto_update; [keepreg | nopin | exact H]].

Lemma proto_offload_all xs s : proto_inv s -> proto_inv (offload_all s xs).
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intros s H; simpl; auto.
  apply IH. unfold offload_block; cbv zeta. destruct (find_block s x); proto_upd H.
Qed.

Lemma proto_archive s us h st : proto_inv s -> proto_inv (archive_units s us h st).
Proof.
  intro H. unfold archive_units, new_group; cbv zeta.
  destruct us as [|[n|g] [|u r]];
  try (destruct (find_block s n) as [b|]; [destruct (in_prompt (b_status b))|]);
  try (destruct (find_group s g)); proto_upd H.
Qed.

Lemma proto_restore us s : proto_inv s -> proto_inv (fold_left restore_unit us s).
Proof.
  revert s; induction us as [|u us IH]; intros s H; simpl; auto. apply IH.
  destruct u; unfold restore_unit; cbv zeta; proto_upd H.
Qed.

Lemma proto_delete us s : proto_inv s -> proto_inv (fold_left delete_unit us s).
Proof.
  revert s; induction us as [|u us IH]; intros s H; simpl; auto. apply IH.
  destruct u; unfold delete_unit; cbv zeta; proto_upd H.
Qed.

Lemma turn_ok_own t own own' : turn_ok t [] own -> turn_ok t [] own'.
Proof.
  destruct t; simpl; auto. intros [A [B [C [D [E [F G]]]]]].
  repeat split; try assumption; exfalso; match goal with X : [] <> [] |- _ => apply X; reflexivity end.
Qed.

Lemma turns_ok_snoc ts t pend own own' :
  turns_ok ts [] own -> turn_ok t pend own' -> turns_ok (ts ++ [t]) pend own'.
Proof.
  induction ts as [|t0 ts IH]; intros H T; simpl; auto.
  destruct ts as [|t1 ts].
  - simpl. split; auto. apply turn_ok_own with own; exact H.
  - destruct H as [H1 H2]. cbn [app]. split; [apply turn_ok_own with own; exact H1|].
    apply IH; auto.
Qed.

Lemma turns_ok_split ts t pend own :
  turns_ok (ts ++ [t]) pend own -> turns_ok ts [] own /\ turn_ok t pend own.
Proof.
  induction ts as [|t0 ts IH]; intro H; simpl in *; auto.
  destruct ts as [|t1 ts]; simpl in *; destruct H as [H1 H2]; auto.
  destruct (IH H2) as [A B]. split; auto.
Qed.

Lemma add_result_spec ts r :
  last_is_call ts = true ->
  exists before c rs, ts = before ++ [TC c rs] /\ add_result ts r = before ++ [TC c (rs ++ [r])].
Proof.
  unfold last_is_call, add_result. intro H. pose proof (rev_involutive ts) as R.
  destruct (rev ts) as [|[b|c rs] before]; try discriminate.
  exists (rev before), c, rs. split; auto.
Qed.

Lemma map_fst_remove_pending cid p :
  map fst (remove_pending cid p) = remove_first cid (map fst p).
Proof.
  induction p as [|[i c] p IH]; cbn [remove_pending map fst remove_first]; auto.
  rewrite Nat.eqb_sym. destruct (cid =? i); cbn [map fst]; auto. rewrite IH. reflexivity.
Qed.

Lemma map_fst_combine (a : list nat) (b : list nat) :
  length a <= length b -> map fst (combine a b) = a.
Proof.
  revert b; induction a as [|x a IH]; intros [|y b] L; simpl in *; auto; try lia.
  rewrite IH; auto. lia.
Qed.

Lemma turns_ok_add_result ts pend own r cid :
  turns_ok ts pend own -> last_is_call ts = true -> In cid pend ->
  b_kind r = KResult -> b_cid r = cid ->
  turns_ok (add_result ts r) (remove_first cid pend) own.
Proof.
  intros H L I K C. destruct (add_result_spec ts r L) as [before [c [rs [E1 E2]]]].
  rewrite E2. rewrite E1 in H. apply turns_ok_split in H. destruct H as [H1 H2].
  apply turns_ok_snoc with own; auto.
  destruct H2 as [Kc [NP [N [NE [F [P O]]]]]]. simpl.
  split; auto. split; auto. split; auto. split; auto. split.
  - apply Forall_app; split; auto.
  - split.
    + unfold cids in *. rewrite map_app, <- app_assoc. rewrite P. apply Permutation_app_head.
      simpl. rewrite C. apply remove_first_perm; auto.
    + intro E. apply O. intro Z. subst. contradiction.
Qed.

Lemma pending_offload_all xs s :
  pending (offload_all s xs) = pending s /\ owner (offload_all s xs) = owner s.
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intro s; simpl; auto.
  destruct (IH (offload_block s x)) as [A B]. rewrite A, B.
  unfold offload_block; cbv zeta. destruct (find_block s x); auto.
Qed.

Lemma proto_step s o : proto_inv s -> proto_inv (fst (step s o)).
Proof.
  intro H. destruct o; cbn [step].
  - destruct k; try exact H; unfold reg_plain; destruct (pending s) eqn:Pe; try exact H;
    destruct (_ && _); cbn [fst]; try exact H;
    apply proto_with_dash, proto_with_counts; unfold proto_inv in *; cbn [with_turns turns pending owner];
    rewrite Pe in *; apply turns_ok_snoc with (owner s); auto; simpl; repeat split; discriminate.
  - unfold reg_call. destruct (pending s) eqn:Pe; try exact H.
    destruct ids as [|i ids]; try exact H. destruct (negb _) eqn:Nd; try exact H.
    destruct (keep_pending (cfg s) && _); try exact H. cbn [fst].
    apply proto_with_dash, proto_with_counts. unfold proto_inv in *.
    cbn [with_pending with_turns turns pending owner]. rewrite Pe in H.
    rewrite map_fst_combine by (rewrite app_length, repeat_length; lia).
    apply turns_ok_snoc with (owner s); auto. simpl.
    apply negb_false_iff, nodupb_NoDup in Nd.
    split; auto. split; [discriminate|]. split; auto. split; [discriminate|]. split; auto.
  - unfold reg_result. destruct (negb _ ) eqn:N; try exact H.
    destruct (decide _ _ _ _) as [g off]. cbn [fst]. wf_split; [|exact H].
    apply Bool.negb_false_iff, andb_true_iff in N. destruct N as [Ex L].
    apply proto_with_dash, proto_with_counts. unfold proto_inv in *.
    cbn [with_pending with_turns turns pending owner].
    destruct (pending_offload_all off s) as [P1 O1].
    pose proof (proto_offload_all off s H) as H2. unfold proto_inv in H2. rewrite P1, O1 in H2.
    rewrite map_fst_remove_pending.
    apply turns_ok_add_result; auto.
    + apply last_is_call_offload_all; exact L.
    + apply existsb_exists in Ex. destruct Ex as [q [Hq E]]. apply Nat.eqb_eq in E.
      apply in_map_iff. exists q; auto.
    + rej; reflexivity.
    + rej; reflexivity.
  - unfold act. destruct (resolve s AArchive us); try exact H. cbn [fst]. wf_split; [|exact H].
    apply proto_with_dash, proto_archive; exact H.
  - unfold act. destruct (resolve s ARestore us); try exact H. cbn [fst]. wf_split; [|exact H].
    apply proto_with_dash, proto_restore; exact H.
  - unfold act. destruct (resolve s ADelete us); try exact H. cbn [fst]. wf_split; [|exact H].
    apply proto_with_dash, proto_delete; exact H.
  - destruct (find_block s n); [destruct (recover s n)|]; exact H.
  - exact H.
Qed.

Lemma proto_init c d s : init c d = Some s -> proto_inv s.
Proof. unfold init. destruct (_ <=? _); intro H; inversion H; subst. reflexivity. Qed.

Lemma render_valid s : proto_inv s -> openai_valid (render s).
Proof.
  intro H. unfold render. destruct (mode_of s).
  - apply normal_render_valid; exact H.
  - apply management_render_valid; exact H.
Qed.

(* ------------------------------------------------------------------ *)
(* Recoverability *)

Lemma key_eqb_spec a b : key_eqb a b = true <-> a = b.
Proof.
  destruct a, b; simpl; split; intro H; try discriminate; try congruence;
  try (apply Nat.eqb_eq in H; congruence); inversion H; apply Nat.eqb_refl.
Qed.

Lemma lookup_in k st v : lookup k st = Some v -> In (k, v) st.
Proof.
  induction st as [|[k' v'] st IH]; simpl; [discriminate|].
  destruct (key_eqb k k') eqn:E; intro H; [inversion H; subst; apply key_eqb_spec in E; subst; auto|].
  right; auto.
Qed.

Lemma in_lookup k st v : In (k, v) st -> exists v', lookup k st = Some v'.
Proof.
  induction st as [|[k' v'] st IH]; simpl; [intros []|]. intros [H|H].
  - inversion H; subst. rewrite (proj2 (key_eqb_spec k k) eq_refl). eauto.
  - destruct (key_eqb k k'); eauto.
Qed.

Lemma lookup_unique k st v v' : NoDup (map fst st) -> In (k, v) st -> lookup k st = Some v' -> v = v'.
Proof.
  intros N H L. apply lookup_in in L.
  induction st as [|[k1 v1] st IH]; simpl in *; [contradiction|].
  inversion N; subst.
  destruct H as [H|H]; destruct L as [L|L]; try congruence.
  - inversion H; subst. exfalso. apply H2. apply in_map_iff. exists (k, v'); auto.
  - inversion L; subst. exfalso. apply H2. apply in_map_iff. exists (k, v); auto.
  - apply IH; auto.
Qed.

Definition inline_pred (n : nat) (e : entry) : bool :=
  match e with EIn (UB m) _ => m =? n | _ => false end.

Lemma inline_in_sound n st d :
  inline_in n st = Some d -> exists k es, In (k, VGrp es) st /\ In (EIn (UB n) d) es.
Proof.
  induction st as [|[k v] st IH]; simpl; [discriminate|].
  destruct v as [x|es].
  - intro H. destruct (IH H) as [k' [es [A B]]]. eauto.
  - destruct (find _ es) as [e|] eqn:F.
    + pose proof (find_some _ _ F) as [F1 F2].
      destruct e as [[m|m] d'|u k']; try discriminate F2.
      intro H. inversion H; subst. apply Nat.eqb_eq in F2. subst. exists k, es. auto.
    + intro H. destruct (IH H) as [k' [es' [A B]]]. eauto.
Qed.

Lemma inline_in_complete n st k es d :
  In (k, VGrp es) st -> In (EIn (UB n) d) es -> exists d', inline_in n st = Some d'.
Proof.
  induction st as [|[k1 v] st IH]; simpl; [intros []|]. intros [H|H] E.
  - inversion H; subst.
    destruct (find (fun e => match e with EIn (UB m) _ => m =? n | _ => false end) es) as [e|] eqn:F.
    + pose proof (find_some _ _ F) as [_ F2].
      destruct e as [[m|m] d'|u k']; try discriminate. eauto.
    + exfalso. eapply find_none in F; [|exact E]. simpl in F. rewrite Nat.eqb_refl in F. discriminate.
  - destruct v as [x|es1]; [apply (IH H E)|].
    destruct (find _ es1) as [e|] eqn:F; [|apply (IH H E)].
    destruct e as [[m|m] d'|u k']; eauto.
Qed.

Lemma ids_nodup s : ids_ok s -> NoDup (map b_id (blocks s)).
Proof. unfold ids_ok. intros ->. apply seq_NoDup. Qed.

Lemma find_unique bs b :
  NoDup (map b_id bs) -> In b bs -> find (fun x => b_id x =? b_id b) bs = Some b.
Proof.
  induction bs as [|x bs IH]; simpl; [intros _ []|]. intros N [H|H]; inversion N; subst.
  - rewrite Nat.eqb_refl. reflexivity.
  - destruct (Nat.eqb_spec (b_id x) (b_id b)) as [E|E].
    + exfalso. apply H2. rewrite E. apply in_map; auto.
    + apply IH; auto.
Qed.

Lemma find_block_in s n b : find_block s n = Some b -> In b (blocks s) /\ b_id b = n.
Proof.
  unfold find_block. intro F. apply find_some in F. destruct F as [A B].
  apply Nat.eqb_eq in B. auto.
Qed.

Definition in_data (s : state) (n d : nat) : Prop :=
  exists b, In b (blocks s) /\ b_id b = n /\ b_data b = d.

Lemma in_data_unique s b d :
  ids_ok s -> In b (blocks s) -> in_data s (b_id b) d -> d = b_data b.
Proof.
  intros I H [b' [H' [E D]]]. subst.
  assert (U := find_unique _ _ (ids_nodup s I) H).
  assert (U' := find_unique _ _ (ids_nodup s I) H'). rewrite E in U'. congruence.
Qed.

Lemma in_data_regs s s' fresh n d :
  regs s' = regs s ++ fresh -> in_data s n d -> in_data s' n d.
Proof.
  intros R [b [H [E D]]].
  assert (In (registered b) (regs s')) by (rewrite R; apply in_or_app; left; apply in_map; auto).
  unfold regs in H0. apply in_map_iff in H0. destruct H0 as [b' [E' H']].
  unfold registered in E'. inversion E'. exists b'. repeat split; auto; congruence.
Qed.

(* The store holds only registered bytes, under one entry per key; a block's
   own key holds raw bytes; group keys and groups are below the counter; and
   every archived or offloaded block has its bytes under its own key or
   inlined in its group's payload. *)
Definition store_sound (s : state) : Prop :=
  (forall n v, In (KB n, v) (store s) -> exists d, v = VRaw d /\ in_data s n d) /\
  (forall k es, In (k, VGrp es) (store s) -> forall m d, In (EIn (UB m) d) es -> in_data s m d).

Definition covered (st : list (key * value)) (b : block) : Prop :=
  match b_status b with
  | Archived | Offloaded =>
      (exists d, In (KB (b_id b), VRaw d) st) \/
      (exists g es d, b_group b = Some g /\ In (KG g, VGrp es) st /\ In (EIn (UB (b_id b)) d) es)
  | _ => True
  end.

Definition fresh_groups (s : state) : Prop :=
  (forall g v, In (KG g, v) (store s) -> g <= ngroups s) /\
  (forall b g, In b (blocks s) -> b_group b = Some g -> g <= ngroups s).

Definition rec_inv (s : state) : Prop :=
  ids_ok s /\ store_sound s /\ NoDup (map fst (store s)) /\ fresh_groups s /\
  (forall b, In b (blocks s) -> covered (store s) b).

Lemma recover_ok s b :
  rec_inv s -> In b (blocks s) -> b_status b <> Deleted -> recover s (b_id b) = Some (b_data b).
Proof.
  intros [I [[S1 S2] [U [_ C]]]] H ND. unfold recover.
  replace (find_block s (b_id b)) with (Some b) by (symmetry; exact (find_unique _ _ (ids_nodup s I) H)).
  specialize (C b H). unfold covered in C.
  assert (KB_ok : forall v, lookup (KB (b_id b)) (store s) = Some v ->
                   match v with VRaw d => Some d | _ => inline_in (b_id b) (store s) end
                   = Some (b_data b)).
  { intros v L. apply lookup_in in L. destruct (S1 _ _ L) as [d [-> D]].
    f_equal. apply (in_data_unique s b d I H D). }
  destruct (b_status b) eqn:St; try reflexivity; try contradiction.
  all: destruct (lookup (KB (b_id b)) (store s)) as [v|] eqn:L; [apply KB_ok; auto|].
  all: destruct C as [[d Hd]|[g [es [d [G [Hg He]]]]]];
       [destruct (in_lookup _ _ _ Hd) as [v' Hv']; congruence|].
  all: destruct (inline_in_complete _ _ _ _ _ Hg He) as [d' Hd'];
       rewrite Hd'; destruct (inline_in_sound _ _ _ Hd') as [k [es' [A B]]];
       f_equal; apply (in_data_unique s b d' I H); apply (S2 _ _ A _ _ B).
Qed.

(* Store operations *)
Lemma in_remove_key k st x : In x (remove_key k st) <-> In x st /\ fst x <> k.
Proof.
  unfold remove_key. rewrite filter_In. split; intros [A B]; split; auto.
  - intro E. subst. rewrite (proj2 (key_eqb_spec _ _) eq_refl) in B. discriminate.
  - destruct (key_eqb k (fst x)) eqn:E; auto. apply key_eqb_spec in E. congruence.
Qed.

Lemma in_put k v st x : In x (put k v st) <-> (In x st /\ fst x <> k) \/ x = (k, v).
Proof.
  unfold put. rewrite in_app_iff, in_remove_key. simpl. split; intros [A|A]; auto.
  - destruct A as [A|[]]; auto.
Qed.

Lemma nodup_filter_keys (p : key * value -> bool) st :
  NoDup (map fst st) -> NoDup (map fst (filter p st)).
Proof.
  induction st as [|x st IH]; simpl; auto. intro N. inversion N; subst.
  destruct (p x); simpl; auto. constructor; auto.
  intro H. apply H1. apply in_map_iff in H. destruct H as [y [E Y]].
  apply filter_In in Y. apply in_map_iff. exists y; tauto.
Qed.

Lemma nodup_put k v st : NoDup (map fst st) -> NoDup (map fst (put k v st)).
Proof.
  intro N. unfold put. rewrite map_app. simpl.
  apply (Permutation_NoDup (Permutation_cons_append _ k)). constructor.
  - intro Hx. apply in_map_iff in Hx. destruct Hx as [y [E Y]]. apply in_remove_key in Y. tauto.
  - apply nodup_filter_keys; auto.
Qed.

Lemma nodup_remove_key k st : NoDup (map fst st) -> NoDup (map fst (remove_key k st)).
Proof. apply nodup_filter_keys. Qed.

Lemma prot_cov s b st : protected s b = true -> covered st b.
Proof. unfold protected, covered. destruct (b_status b); intro H; try discriminate; exact I. Qed.

Lemma in_data_update s f n d : keeps_regs f -> in_data (update s f) n d <-> in_data s n d.
Proof.
  intro K. assert (R := regs_update s f K). split; apply in_data_regs with (fresh := []);
  rewrite app_nil_r; auto.
Qed.

Lemma blocks_update_in s f b' :
  In b' (blocks (update s f)) ->
  exists b, In b (blocks s) /\ ((protected s b = true /\ b' = b) \/ (protected s b = false /\ b' = f b)).
Proof.
  rewrite blocks_update. intro H. apply in_map_iff in H. destruct H as [b [E H]].
  exists b. split; auto. destruct (protected s b); auto.
Qed.

Definition sound_entry (s : state) (kv : key * value) : Prop :=
  match kv with
  | (KB n, v) => exists d, v = VRaw d /\ in_data s n d
  | (k, VGrp es) => forall m d, In (EIn (UB m) d) es -> in_data s m d
  | _ => True
  end.

Lemma store_sound_iff s : store_sound s <-> forall kv, In kv (store s) -> sound_entry s kv.
Proof.
  unfold store_sound. split.
  - intros [A B] [k v] H. destruct k as [n|g]; simpl; [apply (A n v H)|].
    destruct v as [d|es]; auto. apply (B _ _ H).
  - intro H. split.
    + intros n v Hn. apply (H _ Hn).
    + intros k es Hk m d Hm. specialize (H _ Hk). destruct k; simpl in H.
      * destruct H as [d' [E _]]. discriminate.
      * apply H; auto.
Qed.

Lemma sound_entry_update s f kv : keeps_regs f -> sound_entry s kv -> sound_entry (update s f) kv.
Proof.
  intros K. destruct kv as [[n|g] [d|es]]; simpl.
  - intros [d' [E D]]. exists d'. split; auto. apply in_data_update; auto.
  - intros [d' [E D]]. exists d'. split; auto. apply in_data_update; auto.
  - auto.
  - intros H m d Hm. apply in_data_update; auto.
Qed.

Lemma sound_entry_regs s s' fresh kv :
  regs s' = regs s ++ fresh -> sound_entry s kv -> sound_entry s' kv.
Proof.
  intro R. destruct kv as [[n|g] [d|es]]; simpl; auto.
  - intros [d' [E D]]. exists d'. split; auto. eapply in_data_regs; eauto.
  - intros [d' [E D]]. exists d'. split; auto. eapply in_data_regs; eauto.
  - intros H m d Hm. eapply in_data_regs; eauto.
Qed.

Lemma rec_build s s' fresh :
  regs s' = regs s ++ fresh -> ids_ok s' ->
  (forall kv, In kv (store s') -> sound_entry s kv) ->
  NoDup (map fst (store s')) -> fresh_groups s' ->
  (forall b, In b (blocks s') -> covered (store s') b) -> rec_inv s'.
Proof.
  intros R I S U F C. split; auto. split; auto. apply store_sound_iff.
  intros kv H. apply (sound_entry_regs s s' fresh); auto.
Qed.

Lemma cov_incl st st' b :
  covered st b ->
  (forall kv, In kv st -> (fst kv = KB (b_id b) \/ exists g, b_group b = Some g /\ fst kv = KG g) ->
              In kv st') ->
  covered st' b.
Proof.
  unfold covered. intros C K. destruct (b_status b); auto;
  (destruct C as [[d H]|[g [es [d [G [H E]]]]]];
   [left; exists d; apply K; auto | right; exists g, es, d; repeat split; auto; apply K; eauto]).
Qed.

Lemma sound_in s kv : store_sound s -> In kv (store s) -> sound_entry s kv.
Proof. intros S H. apply store_sound_iff; auto. Qed.

Lemma ids_update s f : keeps_regs f -> ids_ok s -> ids_ok (update s f).
Proof.
  unfold ids_ok. intros K I. rewrite (ids_of_regs _ _ (regs_update s f K)). exact I.
Qed.

(* The guard's offload keeps the invariant. *)
Lemma rec_offload_block s x : rec_inv s -> rec_inv (offload_block s x).
Proof.
  intros R. pose proof R as [I [S [U [[F1 F2] C]]]]. unfold offload_block; cbv zeta.
  set (f := fun b => if b_id b =? x then set_block Offloaded None 1 (b_h b) (pos_cost s b) b else b).
  assert (K : keeps_regs f) by (unfold f; keepreg).
  destruct (find_block s x) as [bx|] eqn:Fx.
  - destruct (find_block_in _ _ _ Fx) as [Hx Ix].
    apply (rec_build s _ []); [exact (eq_trans (regs_update s f K) (eq_sym (app_nil_r _)))|..].
    + exact (ids_update s f K I).
    + cbn [store with_store]. intros kv Hkv. apply in_put in Hkv. destruct Hkv as [[Hkv _]| ->].
      * apply sound_in; auto.
      * simpl. exists (b_data bx). split; auto. exists bx; auto.
    + apply nodup_put; auto.
    + split; cbn [store with_store ngroups].
      * intros g v Hv. apply in_put in Hv. destruct Hv as [[Hv _]|Hv]; [eapply F1; eauto|discriminate].
      * intros b' g Hb' G. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[_ ->]|[_ ->]]]].
        -- eapply F2; eauto.
        -- unfold f in G. destruct (b_id b =? x); [discriminate|]. eapply F2; eauto.
    + intros b' Hb'. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[P ->]|[P ->]]]].
      * apply (prot_cov s); auto.
      * unfold f. destruct (Nat.eqb_spec (b_id b) x) as [E|E].
        -- unfold covered. cbn [b_status b_id set_block]. left. exists (b_data bx).
           apply in_put. right. congruence.
        -- apply (cov_incl (store s)); [apply C; auto|]. intros kv Hkv W. apply in_put. left.
           split; auto. destruct W as [W|[g [_ W]]]; rewrite W; congruence.
  - (* no block x: nothing changes but the unchanged blocks *)
    assert (N : forall b, In b (blocks s) -> b_id b <> x).
    { intros b Hb E. subst. unfold find_block in Fx.
      rewrite (find_unique _ _ (ids_nodup s I) Hb) in Fx. discriminate. }
    apply (rec_build s _ []); [exact (eq_trans (regs_update s f K) (eq_sym (app_nil_r _)))|..].
    + exact (ids_update s f K I).
    + intros kv Hkv. apply sound_in; auto.
    + exact U.
    + split; [exact F1|]. intros b' g Hb' G. apply blocks_update_in in Hb'.
      destruct Hb' as [b [Hb [[_ ->]|[_ ->]]]]; [eapply F2; eauto|].
      unfold f in G. destruct (Nat.eqb_spec (b_id b) x); [exfalso; apply (N b Hb); auto|]. eapply F2; eauto.
    + intros b' Hb'. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[P ->]|[P ->]]]].
      * apply (prot_cov s); auto.
      * unfold f. destruct (Nat.eqb_spec (b_id b) x); [exfalso; apply (N b Hb); auto|]. apply C; auto.
Qed.

Lemma rec_offload_all xs s : rec_inv s -> rec_inv (offload_all s xs).
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intros s H; simpl; auto.
  apply IH. apply rec_offload_block; auto.
Qed.

(* A block keeps its coverage when the store keeps its own key and its group's key. *)
Lemma cov_keep st st' b :
  covered st b ->
  (forall kv, In kv st -> fst kv = KB (b_id b) -> In kv st') ->
  (forall g kv, b_group b = Some g -> In kv st -> fst kv = KG g -> In kv st') ->
  covered st' b.
Proof.
  intros C K1 K2. apply (cov_incl st); auto. intros kv H [W|[g [G W]]]; eauto.
Qed.

Lemma rec_append s s' b fresh :
  rec_inv s -> blocks s' = blocks s ++ [b] -> in_prompt (b_status b) = true -> b_group b = None ->
  store s' = store s -> ngroups s' = ngroups s -> ids_ok s' -> regs s' = regs s ++ fresh ->
  rec_inv s'.
Proof.
  intros [I [S [U [[F1 F2] C]]]] B P G St N I' R.
  apply (rec_build s s' fresh); auto.
  - rewrite St. intros kv H. apply sound_in; auto.
  - rewrite St; auto.
  - split; rewrite ?St, ?N; auto. intros b' g Hb' G'. rewrite B in Hb'.
    apply in_app_iff in Hb'. destruct Hb' as [Hb'|[<-|[]]]; [eapply F2; eauto|congruence].
  - rewrite St. intros b' Hb'. rewrite B in Hb'. apply in_app_iff in Hb'.
    destruct Hb' as [Hb'|[<-|[]]]; [apply C; auto|].
    unfold covered. destruct (b_status b); try discriminate; trivial.
Qed.

Lemma rec_move_out s x st lvl (hf : block -> nat * nat) (tf : block -> nat) bx :
  (st = Archived \/ st = Offloaded) -> find_block s x = Some bx -> rec_inv s ->
  rec_inv (with_store
             (update s (fun b => if b_id b =? x then set_block st None lvl (hf b) (tf b) b else b))
             (put (KB x) (VRaw (b_data bx)) (store s))).
Proof.
  intros Hst Fx R. pose proof R as [I [S [U [[F1 F2] C]]]].
  set (f := fun b => if b_id b =? x then set_block st None lvl (hf b) (tf b) b else b).
  assert (K : keeps_regs f) by (unfold f; keepreg).
  destruct (find_block_in _ _ _ Fx) as [Hx Ix].
  apply (rec_build s _ []); [exact (eq_trans (regs_update s f K) (eq_sym (app_nil_r _)))|..].
  + exact (ids_update s f K I).
  + cbn [store with_store]. intros kv Hkv. apply in_put in Hkv. destruct Hkv as [[Hkv _]| ->].
    * apply sound_in; auto.
    * simpl. exists (b_data bx). split; auto. exists bx; auto.
  + apply nodup_put; auto.
  + split; cbn [store with_store ngroups].
    * intros g v Hv. apply in_put in Hv. destruct Hv as [[Hv _]|Hv]; [eapply F1; eauto|discriminate].
    * intros b' g Hb' G. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[_ ->]|[_ ->]]]].
      -- eapply F2; eauto.
      -- unfold f in G. destruct (b_id b =? x); [discriminate|]. eapply F2; eauto.
  + intros b' Hb'. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[P ->]|[P ->]]]].
    * apply (prot_cov s); auto.
    * unfold f. destruct (Nat.eqb_spec (b_id b) x) as [E|E].
      -- unfold covered. cbn [b_status b_id set_block].
         destruct Hst as [-> | ->]; left; exists (b_data bx); apply in_put; right; congruence.
      -- apply (cov_incl (store s)); [apply C; auto|]. intros kv Hkv W. apply in_put. left.
         split; auto. destruct W as [W|[g [_ W]]]; rewrite W; congruence.
Qed.

(* Archive, given what selection guarantees: each named block exists, is not
   deleted and is not inside a group. *)
Definition selectable (s : state) (us : list uid) : Prop :=
  forall n, In (UB n) us ->
    exists b, find_block s n = Some b /\ b_group b = None /\ b_status b <> Deleted.

Lemma inlined_in es n d : In (EIn (UB n) d) es -> inlined es n = true.
Proof.
  intro H. unfold inlined. apply existsb_exists. exists (EIn (UB n) d). split; auto.
  apply Nat.eqb_refl.
Qed.



Lemma uid_eqb_eq a b : uid_eqb a b = true -> a = b.
Proof. destruct a, b; simpl; intro H; try discriminate; apply Nat.eqb_eq in H; congruence. Qed.

Lemma existsb_uid n us : existsb (uid_eqb (UB n)) us = true -> In (UB n) us.
Proof.
  intro H. apply existsb_exists in H. destruct H as [v [Hv E]]. apply uid_eqb_eq in E. subst. auto.
Qed.

Lemma find_block_unique s b : ids_ok s -> In b (blocks s) -> find_block s (b_id b) = Some b.
Proof. intros I H. exact (find_unique _ _ (ids_nodup s I) H). Qed.

Lemma cov_grouped_out st b :
  covered st b -> b_group b = None -> in_prompt (b_status b) = false -> b_status b <> Deleted ->
  exists d, In (KB (b_id b), VRaw d) st.
Proof.
  unfold covered. intros C G P D. destruct (b_status b); try discriminate; try contradiction;
  destruct C as [C|[g [es [d [G' _]]]]]; auto; congruence.
Qed.

Lemma rec_new_group s us h stubs :
  rec_inv s -> selectable s us -> rec_inv (new_group s us h stubs).
Proof.
  intros R Sel. pose proof R as [I [Snd [U [[F1 F2] C]]]].
  unfold new_group; cbv zeta.
  match goal with |- rec_inv (with_counts (with_store (with_groups (update s ?f) _)
                                (put (KG ?gid) (VGrp ?es) (store s))) _ _) =>
    set (F := f); set (ES := es) end.
  assert (K : keeps_regs F) by (unfold F; keepreg).
  (* the new group's payload inlines exactly the registered bytes of visible members *)
  assert (ESok : forall m d, In (EIn (UB m) d) ES ->
                   exists b, find_block s m = Some b /\ b_data b = d).
  { intros m d H. unfold ES in H. rewrite map_map in H. apply in_map_iff in H.
    destruct H as [u [E Hu]]. destruct u as [n|g].
    - destruct (find_block s n) as [b|] eqn:Fb; [destruct (in_prompt (b_status b))|];
        simpl in E; inversion E; subst; eauto.
    - destruct (find_group s g); simpl in E; discriminate. }
  assert (ESin : forall b, In b (blocks s) -> In (UB (b_id b)) us -> in_prompt (b_status b) = true ->
                   In (EIn (UB (b_id b)) (b_data b)) ES).
  { intros b Hb Hu P. unfold ES. rewrite map_map. apply in_map_iff. exists (UB (b_id b)).
    split; auto. rewrite (find_block_unique s b I Hb), P. reflexivity. }
  apply (rec_build s _ []); [exact (eq_trans (regs_update s F K) (eq_sym (app_nil_r _)))|..].
  - exact (ids_update s F K I).
  - cbn [store with_store with_counts]. intros kv Hkv. apply in_put in Hkv.
    destruct Hkv as [[Hkv _]| ->]; [apply sound_in; auto|].
    simpl. intros m d H. destruct (ESok m d H) as [b [Fb D]].
    destruct (find_block_in _ _ _ Fb) as [Hb Ib]. exists b; auto.
  - apply nodup_put; auto.
  - split; cbn [store with_store with_counts ngroups].
    + intros g v Hv. apply in_put in Hv. destruct Hv as [[Hv _]|Hv]; [specialize (F1 g v Hv); lia|].
      inversion Hv; lia.
    + intros b' g Hb' G. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[_ ->]|[_ ->]]]].
      * specialize (F2 b g Hb G). lia.
      * unfold F in G. destruct (existsb _ us); [destruct (in_prompt _)|];
          cbn [b_group set_block] in G; try (inversion G; lia). specialize (F2 b g Hb G). lia.
  - cbn [store with_store with_counts]. intros b' Hb'. apply blocks_update_in in Hb'.
    destruct Hb' as [b [Hb [[P ->]|[P ->]]]]; [apply (prot_cov s); auto|].
    unfold F. destruct (existsb (uid_eqb (UB (b_id b))) us) eqn:D.
    + apply existsb_uid in D. destruct (in_prompt (b_status b)) eqn:IP.
      * unfold covered. cbn [b_status b_id b_group set_block]. right.
        exists (S (ngroups s)), ES, (b_data b). split; auto. split; [apply in_put; right; auto|].
        apply ESin; auto.
      * destruct (Sel _ D) as [b0 [Fb0 [G0 D0]]].
        rewrite (find_block_unique s b I Hb) in Fb0. inversion Fb0; subst b0.
        destruct (cov_grouped_out _ _ (C b Hb) G0 IP D0) as [d Hd].
        unfold covered. cbn [b_status b_id set_block].
        destruct (b_status b) eqn:St; try discriminate; try contradiction;
          left; exists d; apply in_put; left; split; auto; discriminate.
    + apply (cov_keep (store s)); [apply C; auto| |].
      * intros kv Hkv W. apply in_put. left. split; auto. rewrite W. discriminate.
      * intros g kv G Hkv W. apply in_put. left. split; auto. rewrite W.
        specialize (F2 b g Hb G). intro E. inversion E. lia.
Qed.

Lemma rec_archive s us h stubs :
  rec_inv s -> selectable s us -> rec_inv (archive_units s us h stubs).
Proof.
  intros R Sel. pose proof R as [I [Snd [U [[F1 F2] C]]]].
  unfold archive_units.
  destruct us as [|[n|g] [|u r]] eqn:Eus; try (apply rec_new_group; auto; fail).
  - destruct (find_block s n) as [b|] eqn:Fb; [|exact R].
    destruct (in_prompt (b_status b)) eqn:IP; cbv zeta.
    + apply (rec_move_out s n Archived 1 (fun _ => h) (pos_cost s) b); auto.
    + set (F := fun x => if b_id x =? n then set_block Archived None (S (b_level x)) h (b_tok x) x else x).
      assert (K : keeps_regs F) by (unfold F; keepreg).
      destruct (Sel n (or_introl eq_refl)) as [b0 [Fb0 [G0 D0]]]. rewrite Fb in Fb0.
      inversion Fb0; subst b0. destruct (find_block_in _ _ _ Fb) as [Hb Ib].
      destruct (cov_grouped_out _ _ (C b Hb) G0 IP D0) as [d Hd].
      apply (rec_build s _ []); [exact (eq_trans (regs_update s F K) (eq_sym (app_nil_r _)))|..].
      * exact (ids_update s F K I).
      * intros kv Hkv. apply sound_in; auto.
      * exact U.
      * split; [exact F1|]. intros b' g Hb' G. apply blocks_update_in in Hb'.
        destruct Hb' as [x [Hx [[_ ->]|[_ ->]]]]; [eapply F2; eauto|].
        unfold F in G. destruct (b_id x =? n); [discriminate|]. eapply F2; eauto.
      * intros b' Hb'. apply blocks_update_in in Hb'. destruct Hb' as [x [Hx [[P ->]|[P ->]]]].
        -- apply (prot_cov s); auto.
        -- unfold F. destruct (Nat.eqb_spec (b_id x) n) as [E|E]; [|apply C; auto].
           unfold covered. cbn [b_status b_id set_block]. left. exists d. rewrite E, <- Ib. exact Hd.
  - destruct (find_group s g); [exact R | exact R].
Qed.

Lemma rec_restore_unit s u : rec_inv s -> rec_inv (restore_unit s u).
Proof.
  intros R. pose proof R as [I [Snd [U [[F1 F2] C]]]].
  destruct u as [n|g]; unfold restore_unit; cbv zeta.
  - set (F := fun b => if b_id b =? n then set_block Visible None 0 (0, 0) (b_tok b) b else b).
    assert (K : keeps_regs F) by (unfold F; keepreg).
    apply (rec_build s _ []); [exact (eq_trans (regs_update s F K) (eq_sym (app_nil_r _)))|..].
    + exact (ids_update s F K I).
    + cbn [store with_store]. intros kv Hkv. apply in_remove_key in Hkv. apply sound_in; tauto.
    + apply nodup_remove_key; auto.
    + split; cbn [store with_store ngroups].
      * intros g v Hv. apply in_remove_key in Hv. eapply F1; apply Hv.
      * intros b' g Hb' G. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[_ ->]|[_ ->]]]].
        -- eapply F2; eauto.
        -- unfold F in G. destruct (b_id b =? n); [discriminate|]. eapply F2; eauto.
    + cbn [store with_store]. intros b' Hb'. apply blocks_update_in in Hb'.
      destruct Hb' as [b [Hb [[P ->]|[P ->]]]]; [apply (prot_cov s); auto|].
      unfold F. destruct (Nat.eqb_spec (b_id b) n) as [E|E]; [unfold covered; exact Logic.I|].
      apply (cov_keep (store s)); [apply C; auto| |].
      * intros kv Hkv W. apply in_remove_key. split; auto. rewrite W. congruence.
      * intros g kv G Hkv W. apply in_remove_key. split; auto. rewrite W. discriminate.
  - set (ES := match lookup (KG g) (store s) with Some (VGrp es) => es | _ => [] end).
    set (F := fun b => match b_group b with
                       | Some g' => if g' =? g then
                                      if inlined ES (b_id b)
                                      then set_block Visible None (b_level b) (b_h b) (b_tok b) b
                                      else set_block (b_status b) None (b_level b) (b_h b) (b_tok b) b
                                    else b
                       | None => b end).
    assert (K : keeps_regs F) by (unfold F; keepreg).
    apply (rec_build s _ []); [exact (eq_trans (regs_update s F K) (eq_sym (app_nil_r _)))|..].
    + exact (ids_update s F K I).
    + cbn [store with_store]. intros kv Hkv. apply in_remove_key in Hkv. apply sound_in; tauto.
    + apply nodup_remove_key; auto.
    + split; cbn [store with_store with_groups ngroups].
      * intros g' v Hv. apply in_remove_key in Hv. eapply F1; apply Hv.
      * intros b' g' Hb' G. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[_ ->]|[_ ->]]]].
        -- eapply F2; eauto.
        -- unfold F in G. destruct (b_group b) as [h|] eqn:Gb; [|eapply F2; eauto].
           destruct (h =? g); [destruct (inlined ES (b_id b)); discriminate|]. eapply F2; eauto.
    + cbn [store with_store with_groups]. intros b' Hb'. apply blocks_update_in in Hb'.
      destruct Hb' as [b [Hb [[P ->]|[P ->]]]]; [apply (prot_cov s); auto|].
      unfold F. destruct (b_group b) as [h|] eqn:Gb.
      * destruct (Nat.eqb_spec h g) as [E|E].
        -- subst h. destruct (inlined ES (b_id b)) eqn:In_; [unfold covered; exact Logic.I|].
           pose proof (C b Hb) as Cb. unfold covered in *. cbn [b_status b_id b_group set_block].
           destruct (b_status b); auto;
           (destruct Cb as [[d Hd]|[g' [es [d [G' [Hg He]]]]]];
            [left; exists d; apply in_remove_key; split; auto; discriminate|];
            rewrite Gb in G'; inversion G'; subst g';
            destruct (in_lookup _ _ _ Hg) as [v Lv];
            pose proof (lookup_unique _ _ _ _ U Hg Lv) as Ev; subst v;
            unfold ES in In_; rewrite Lv in In_; rewrite (inlined_in _ _ _ He) in In_; discriminate).
        -- apply (cov_keep (store s)); [apply C; auto| |].
           ++ intros kv Hkv W. apply in_remove_key. split; auto. rewrite W. discriminate.
           ++ intros g' kv G Hkv W. apply in_remove_key. split; auto. rewrite W. congruence.
      * apply (cov_keep (store s)); [apply C; auto| |].
        -- intros kv Hkv W. apply in_remove_key. split; auto. rewrite W. discriminate.
        -- intros g' kv G Hkv W. congruence.
Qed.

Lemma rec_delete_unit s u : rec_inv s -> rec_inv (delete_unit s u).
Proof.
  intros R. pose proof R as [I [Snd [U [[F1 F2] C]]]].
  destruct u as [n|g]; unfold delete_unit; cbv zeta.
  - set (F := fun b => if b_id b =? n then set_block Deleted None 0 (0, 0) 0 b else b).
    assert (K : keeps_regs F) by (unfold F; keepreg).
    apply (rec_build s _ []); [exact (eq_trans (regs_update s F K) (eq_sym (app_nil_r _)))|..].
    + exact (ids_update s F K I).
    + cbn [store with_store]. intros kv Hkv. apply in_remove_key in Hkv. apply sound_in; tauto.
    + apply nodup_remove_key; auto.
    + split; cbn [store with_store ngroups].
      * intros g v Hv. apply in_remove_key in Hv. eapply F1; apply Hv.
      * intros b' g Hb' G. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[_ ->]|[_ ->]]]].
        -- eapply F2; eauto.
        -- unfold F in G. destruct (b_id b =? n); [discriminate|]. eapply F2; eauto.
    + cbn [store with_store]. intros b' Hb'. apply blocks_update_in in Hb'.
      destruct Hb' as [b [Hb [[P ->]|[P ->]]]]; [apply (prot_cov s); auto|].
      unfold F. destruct (Nat.eqb_spec (b_id b) n) as [E|E]; [unfold covered; exact Logic.I|].
      apply (cov_keep (store s)); [apply C; auto| |].
      * intros kv Hkv W. apply in_remove_key. split; auto. rewrite W. congruence.
      * intros g kv G Hkv W. apply in_remove_key. split; auto. rewrite W. discriminate.
  - set (DOOM := fun h => existsb (fun x => (g_id x =? h) && under s g x) (groups s)).
    set (DEAD := fun b : block => match b_group b with Some h => DOOM h | None => false end).
    set (F := fun b => if DEAD b then set_block Deleted None 0 (0, 0) 0 b else b).
    assert (K : keeps_regs F) by (unfold F; keepreg).
    set (KEEP := fun kv : key * value => match fst kv with
                                | KB n => match find_block s n with
                                          | Some b => negb (DEAD b) | None => true end
                                | KG h => negb (DOOM h) end).
    apply (rec_build s _ []); [exact (eq_trans (regs_update s F K) (eq_sym (app_nil_r _)))|..].
    + exact (ids_update s F K I).
    + cbn [store with_store]. intros kv Hkv. apply filter_In in Hkv. apply sound_in; tauto.
    + apply nodup_filter_keys; auto.
    + split; cbn [store with_store with_groups ngroups].
      * intros h v Hv. apply filter_In in Hv. eapply F1; apply Hv.
      * intros b' h Hb' G. apply blocks_update_in in Hb'. destruct Hb' as [b [Hb [[_ ->]|[_ ->]]]].
        -- eapply F2; eauto.
        -- unfold F in G. match type of G with context [if ?c then _ else _] => destruct c end;
             [discriminate|]. eapply F2; eauto.
    + cbn [store with_store with_groups]. intros b' Hb'. apply blocks_update_in in Hb'.
      destruct Hb' as [b [Hb [[P ->]|[P ->]]]]; [apply (prot_cov s); auto|].
      unfold F. match goal with |- covered _ (if ?c then _ else _) => destruct c eqn:Db end;
        [unfold covered; exact Logic.I|].
      apply (cov_keep (store s)); [apply C; auto| |].
      * intros kv Hkv W. apply filter_In. split; auto. cbn beta. rewrite W.
        rewrite (find_block_unique s b I Hb), Db. reflexivity.
      * intros h kv G Hkv W. apply filter_In. split; auto. cbn beta. rewrite W.
        rewrite G in Db. rewrite Db. reflexivity.
Qed.

Lemma rec_restore us s : rec_inv s -> rec_inv (fold_left restore_unit us s).
Proof.
  revert s; induction us as [|u us IH]; intros s H; simpl; auto. apply IH, rec_restore_unit; auto.
Qed.

Lemma rec_delete us s : rec_inv s -> rec_inv (fold_left delete_unit us s).
Proof.
  revert s; induction us as [|u us IH]; intros s H; simpl; auto. apply IH, rec_delete_unit; auto.
Qed.

(* What selection guarantees. *)
Lemma in_insert_by {A} (k : A -> nat) x y l : In y (insert_by k x l) -> y = x \/ In y l.
Proof.
  induction l as [|z l IH]; simpl.
  - intros [H|[]]; auto.
  - destruct (k x <=? k z); simpl; intros H; [intuition congruence|].
    destruct H as [H|H]; [tauto|]. destruct (IH H); tauto.
Qed.

Lemma in_sort_by {A} (k : A -> nat) y l : In y (sort_by k l) -> In y l.
Proof.
  unfold sort_by. induction l as [|x l IH]; simpl; auto.
  intro H. destruct (in_insert_by k x y _ H); auto.
Qed.

Lemma in_dedup_acc seen y l : In y (dedup_acc seen l) -> In y l.
Proof.
  revert seen; induction l as [|x l IH]; intros seen; simpl; auto.
  destruct (existsb (uid_eqb x) seen); [intro H; right; eapply IH; eauto|].
  intros [H|H]; [left; auto | right; eapply IH; eauto].
Qed.

Lemma first_error_none s a us : first_error s a us = None -> forall u, In u us -> check_unit s a u = None.
Proof.
  induction us as [|u us IH]; simpl; [intros _ _ []|].
  destruct (check_unit s a u) eqn:E; [discriminate|]. intros H v [<-|Hv]; auto.
Qed.

Lemma resolve_selectable s us l : resolve s AArchive us = inl l -> selectable s l.
Proof.
  unfold resolve. destruct us as [|u0 us0]; [discriminate|].
  destruct (first_error s AArchive (u0 :: us0)) eqn:E; [discriminate|].
  intro H. injection H as El. intros n Hn. rewrite <- El in Hn.
  assert (Hn' : In (UB n) (u0 :: us0)).
  { unfold sort_by, dedup in Hn. cbn [dedup_acc existsb fold_right] in Hn.
    apply in_insert_by in Hn. destruct Hn as [Hn|Hn]; [left; auto|right].
    apply in_sort_by in Hn. apply (in_dedup_acc [u0]); exact Hn. }
  clear Hn; rename Hn' into Hn.
  pose proof (first_error_none _ _ _ E _ Hn) as Cn. unfold check_unit in Cn.
  destruct (find_block s n) as [b|]; [|discriminate].
  exists b. split; auto.
  destruct (b_status b) eqn:St; try discriminate;
  destruct (b_group b); try discriminate; split; auto; congruence.
Qed.

Lemma rec_step s o : rec_inv s -> rec_inv (fst (step s o)).
Proof.
  intro R. pose proof (stable_step s o (proj1 R)) as [Ist [fr Rst]].
  revert Ist Rst. destruct o; cbn [step].
  - destruct k; try (intros; exact R); unfold reg_plain; destruct (pending s);
    try (intros; exact R); destruct (_ && _); try (intros; exact R); cbn [fst]; intros Ist Rst;
    (eapply (rec_append s _ (plain_block (S (nblocks s)) _ pin data c)); eauto;
     [autorewrite with st; rewrite blocks_snoc; reflexivity | destruct pin; reflexivity]).
  - unfold reg_call. destruct (pending s); try (intros; exact R).
    destruct ids; try (intros; exact R). destruct (negb _); try (intros; exact R).
    destruct (keep_pending (cfg s) && _); try (intros; exact R). cbn [fst].
    intros Ist Rst. eapply rec_append; eauto;
      [autorewrite with st; rewrite blocks_snoc; reflexivity | reflexivity..].
  - unfold reg_result. destruct (negb _ ) eqn:N; try (intros; exact R).
    destruct (decide _ _ _ _) as [g off]. cbn [fst]. wf_split; [|intros; exact R]. intros Ist Rst.
    apply Bool.negb_false_iff, andb_true_iff in N. destruct N as [_ N].
    pose proof (rec_offload_all off s R) as R2.
    destruct (groups_offload_all off s) as [_ Ng].
    assert (Rg := regs_offload_all off s).
    match goal with |- context [with_turns ?s2 (add_result (turns ?s2) ?r)] =>
      apply (rec_append s2 _ r fr); auto;
      [ autorewrite with st; unfold blocks at 1, with_turns; cbn [turns];
        apply blocks_add_result; apply last_is_call_offload_all; exact N
      | rej; reflexivity
      | rej; reflexivity
      | rewrite Rg; exact Rst ] end.
  - unfold act. destruct (resolve s AArchive us) eqn:Rs; try (intros; exact R). cbn [fst].
    wf_split; [|intros; exact R].
    intros _ _. exact (rec_archive s l h stubs R (resolve_selectable s us l Rs)).
  - unfold act. destruct (resolve s ARestore us); try (intros; exact R). cbn [fst].
    wf_split; [|intros; exact R].
    intros _ _. exact (rec_restore l s R).
  - unfold act. destruct (resolve s ADelete us); try (intros; exact R). cbn [fst].
    wf_split; [|intros; exact R].
    intros _ _. exact (rec_delete l s R).
  - destruct (find_block s n); [destruct (recover s n)|]; intros; exact R.
  - intros; exact R.
Qed.

Lemma rec_init c d s : init c d = Some s -> rec_inv s.
Proof.
  unfold init. destruct (_ <=? _); intro H; inversion H; subst.
  repeat split; simpl; try (intros; contradiction); try constructor; try reflexivity.
Qed.
