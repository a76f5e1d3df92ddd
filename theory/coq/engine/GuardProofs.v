(* The budget guard meets the specification (Spec.v): the proofs behind
   Statements.v's workspace_guard. *)

From Coq Require Import List Arith Bool Lia PeanoNat ZArith Permutation.
Import ListNotations.
From VistaLabEngine Require Import Model Spec Theorems SpecProofs.

(* ------------------------------------------------------------------ *)
(* Facts about the state a result is registered in. *)

Lemma last_call ts pend own :
  turns_ok ts pend own -> pend <> [] ->
  exists before c rs, ts = before ++ [TC c rs] /\ b_id c = own /\ b_kind c = KCall /\
                      b_status c = Visible.
Proof.
  intros H P. destruct (rev ts) as [|t rb] eqn:R.
  - apply (f_equal (@rev turn)) in R. rewrite rev_involutive in R. subst. simpl in H. contradiction.
  - assert (E : ts = rev rb ++ [t]) by (rewrite <- (rev_involutive ts), R; reflexivity).
    rewrite E in H. apply turns_ok_split in H. destruct H as [_ T].
    destruct t as [b|c rs]; simpl in T.
    + destruct T as [_ [_ T]]. contradiction.
    + destruct T as [K [_ [_ [_ [_ [_ O]]]]]]. destruct (O P) as [V I].
      exists (rev rb), c, rs. auto.
Qed.

Lemma pos_nonresult s tf b : is_result b = false -> pos_msgs s tf b = pos_msgs s false b.
Proof. intro H. unfold pos_msgs. rewrite H. reflexivity. Qed.

Lemma in_blocks_app_turn before t after b :
  In b (turn_blocks t) -> In b (flat_map turn_blocks (before ++ t :: after)).
Proof. intro H. rewrite flat_map_app. apply in_or_app. right. simpl. apply in_or_app. left. exact H. Qed.

Lemma call_cost_eq s :
  proto_inv s -> ids_ok s -> pending s <> [] ->
  (match find_block s (owner s) with Some b => pos_cost s b | None => 0 end) = sp_call_cost s.
Proof.
  intros P Ok Ne. unfold sp_call_cost, sp_block. rewrite sp_blocks_eq.
  unfold proto_inv in P.
  assert (Ne' : map fst (pending s) <> []) by (destruct (pending s); [contradiction|discriminate]).
  destruct (last_call _ _ _ P Ne') as [before [c [rs [E [I [K _]]]]]].
  assert (Hc : In c (blocks s)).
  { unfold blocks. rewrite E. apply in_blocks_app_turn with (after := []). left. reflexivity. }
  assert (F := find_unique _ _ (ids_nodup s Ok) Hc). rewrite I in F.
  unfold find_block. rewrite F. unfold pos_cost. rewrite sp_costs_eq, <- sp_position_eq.
  apply f_equal. apply pos_nonresult. unfold is_result. rewrite K. reflexivity.
Qed.

(* ------------------------------------------------------------------ *)
(* The rounds never decide by the cap; they return a prefix of the order. *)

Lemma rounds_not_cap f s cs e ds i dn : fst (rounds f s cs e ds i dn) <> GRejectCap.
Proof.
  revert s cs e i dn. induction f as [|f IH]; intros s cs e i dn; simpl; [discriminate|].
  destruct (take_plan cs 0 0 e []) as [[plan rest] enough].
  destruct (negb enough); simpl; [discriminate|].
  destruct (total_with _ _ <=? hard (cfg s)); simpl; [discriminate|]. apply IH.
Qed.

(* ------------------------------------------------------------------ *)
(* The new block. *)

Lemma find_none_ids (bs : list block) n :
  (forall b, In b bs -> b_id b <> n) -> find (fun b => Nat.eqb (b_id b) n) bs = None.
Proof.
  induction bs as [|x bs IH]; simpl; intro H; auto.
  destruct (Nat.eqb_spec (b_id x) n) as [E|E]; [exfalso; apply (H x); auto|]. apply IH; auto.
Qed.

Lemma ids_below s b : ids_ok s -> In b (blocks s) -> b_id b < S (nblocks s).
Proof.
  unfold ids_ok. intros Ok H. assert (I : In (b_id b) (map b_id (blocks s))) by (apply in_map; auto).
  rewrite Ok in I. apply in_seq in I. lia.
Qed.

Lemma pend_guard_cap a b g : pend_guard a b g = GRejectCap <-> g = GRejectCap.
Proof. destruct g; cbn; try (split; congruence). all: destruct (_ && _); split; congruence. Qed.

Lemma pend_guard_hard a b g : pend_guard a b g = GRejectHard <-> g = GRejectHard.
Proof. destruct g; cbn; try (split; congruence). all: destruct (_ && _); split; congruence. Qed.

Lemma pend_guard_admit a b g : pend_guard a b g = GAdmit -> g = GAdmit.
Proof. destruct g; cbn; try congruence. all: destruct (_ && _); congruence. Qed.

Lemma pend_guard_cases a b g : pend_guard a b g = g \/ (g = GAdmit /\ pend_guard a b g = GRejectPending).
Proof. destruct g; cbn; auto. all: destruct (_ && _); auto. Qed.

(* The floor check that ends reg_result, with the result's hypothesis. *)
Ltac wf_split_all :=
  match goal with |- context [within_floor ?s ?s' ?r] =>
    unfold within_floor in *; destruct (floor s' <=? budget (cfg s)) eqn:?WF; cbn [fst snd] in * end.

Lemma guard_new_and_cap s cid data cc p t notice nc ds :
  proto_inv s -> ids_ok s ->
  let o := OResult cid data cc p t notice nc ds in
  let s' := fst (step s o) in
  let r := snd (step s o) in
  r_ok r = None ->
  (exists b, sp_block s' (S (nblocks s)) = Some b /\ b_kind b = KResult /\ b_status b = Visible /\
     match r_guard r with
     | GAdmit => b_data b = data /\ b_rej b = false
     | _ => b_data b = notice /\ b_rej b = true
     end) /\
  (r_guard r = GRejectCap <->
     budget (cfg s) < fst cc + fixed (cfg s) + sp_pinned_cost s + sp_call_cost s + dfloor (cfg s)).
Proof.
  intros P Ok o s' r R. unfold s', r, o in *. clear s' r o. cbn [step] in *.
  unfold reg_result in *.
  destruct (negb (existsb (fun q => fst q =? cid) (pending s) && last_is_call (turns s))) eqn:N;
    [simpl in R; discriminate|].
  apply Bool.negb_false_iff, andb_true_iff in N. destruct N as [Ex L].
  assert (Ne : pending s <> []) by (destruct (pending s); [discriminate|discriminate]).
  destruct (decide _ _ _ ds) as [g off] eqn:D. cbn [fst snd] in *.
  wf_split_all; [|cbn in R; discriminate].
  match goal with |- context [pend_guard ?a ?b g] => remember (pend_guard a b g) as g' eqn:Eg end.
  cbn [r_guard].
  set (n := S (nblocks s)) in *.
  set (rb := mkBlock n KResult data cid [] cc p t false Visible None 0 (0, 0) 0) in *.
  set (s1 := with_counts (with_pending (with_turns s (add_result (turns s) rb))
               (remove_pending cid (pending s)) (owner s)) n (ngroups s)) in *.
  split.
  - set (s2 := offload_all s off).
    set (r' := if match g' with GAdmit => false | _ => true end
               then mkBlock n KResult notice cid [] nc p t true Visible None 0 (0, 0) 0 else rb).
    exists r'. split.
    + unfold sp_block. rewrite sp_blocks_eq. unfold blocks. cbn [turns with_dash with_counts with_pending with_turns].
      rewrite blocks_add_result by (apply last_is_call_offload_all; exact L).
      rewrite find_app'. rewrite find_none_ids; [simpl; unfold n; destruct g'; simpl; rewrite Nat.eqb_refl; reflexivity|].
      intros b Hb E. assert (I : In (b_id b) (map b_id (blocks s2))) by (apply in_map; exact Hb).
      unfold s2 in I. rewrite (ids_of_regs _ _ (regs_offload_all off s)) in I.
      rewrite Ok in I. apply in_seq in I. unfold n in E. lia.
    + unfold r', rb. destruct g'; simpl; repeat split.
  - rewrite Eg, pend_guard_cap. unfold decide in D.
    assert (C1 : cfg s1 = cfg s) by reflexivity.
    assert (Pin : pinned_cost s1 = sp_pinned_cost s).
    { unfold pinned_cost, sp_pinned_cost. rewrite <- sp_pinned_eq, sp_costs_eq.
      rewrite (pinned_msgs_app s s1 rb).
      - simpl. rewrite app_nil_r. reflexivity.
      - unfold s1, blocks. cbn [turns with_counts with_pending with_turns].
        apply blocks_add_result. exact L. }
    rewrite C1, Pin, (call_cost_eq s P Ok Ne) in D.
    replace (fst (b_c rb)) with (fst cc) in D by reflexivity.
    destruct (budget (cfg s) <? fst cc + fixed (cfg s) + sp_pinned_cost s + sp_call_cost s
                                 + dfloor (cfg s)) eqn:Cap.
    + inversion D; subst. apply Nat.ltb_lt in Cap. split; auto.
    + apply Nat.ltb_ge in Cap. split; [|lia]. intro G. subst g.
      destruct (total_with s1 (dash_at ds 0) <=? hard (cfg s)); [inversion D|].
      match type of D with
      | rounds ?f ?a ?b ?c ?d ?e ?h = _ =>
          pose proof (rounds_not_cap f a b c d e h) as NC; rewrite D in NC; exfalso; apply NC; reflexivity
      end.
Qed.

(* ------------------------------------------------------------------ *)
(* What offloading changes: only the offloaded positions' costs. *)

Definition content (s : state) : nat :=
  fixed (cfg s) + costs (flat_map (turn_msgs s) (turns s)) + costs (pending_msgs s).

Lemma total_with_content s d : total_with s d = content s + d.
Proof.
  unfold total_with, overhead, conversation, content. rewrite costs_flat_map.
  rewrite <- (sum_split is_system_turn (fun t => costs (turn_msgs s t))). lia.
Qed.

Lemma sp_content_eq s : sp_content s = content s.
Proof.
  unfold sp_content, content. rewrite sp_costs_eq, costs_app, concat_map_flat.
  rewrite (flat_map_ext _ _ (fun t => eq_sym (sp_turn_eq s t))). unfold sp_pending, pending_msgs. lia.
Qed.

Lemma top_group_groups s s' g : groups s' = groups s -> top_group s' g = top_group s g.
Proof. intro E. unfold top_group, find_group. rewrite E. reflexivity. Qed.

Lemma cost_groups s s' tf b :
  groups s' = groups s -> costs (pos_msgs s' tf b) = costs (pos_msgs s tf b).
Proof.
  intro E. unfold pos_msgs.
  destruct (b_status b), (b_group b) as [g|]; cbv iota beta zeta; try reflexivity;
    try (pose proof (top_group_groups s s' g E) as T;
         destruct (top_group s' g) as [x|], (top_group s g) as [y|]; try discriminate;
         try (injection T; intros <-); try reflexivity);
    destruct (is_result b), (is_call b), tf, (b_rej b); try reflexivity;
    try (destruct (first_leaf x =? b_id b)); reflexivity.
Qed.

Lemma turn_cost_groups s s' t :
  groups s' = groups s -> costs (turn_msgs s' t) = costs (turn_msgs s t).
Proof.
  intro E. destruct t as [b|c rs]; simpl; [apply cost_groups; exact E|].
  rewrite !costs_app, !costs_flat_map, (cost_groups s s' false c E). f_equal.
  f_equal. apply map_ext. intro r. apply cost_groups; exact E.
Qed.

Lemma turns_cost_fixed s s' g ts :
  groups s' = groups s -> (forall b, In b (flat_map turn_blocks ts) -> g b = b) ->
  costs (flat_map (turn_msgs s') (map (map_turn g) ts)) = costs (flat_map (turn_msgs s) ts).
Proof.
  intros E H. induction ts as [|t ts IH]; simpl; auto.
  rewrite !costs_app, IH by (intros b Hb; apply H; simpl; apply in_or_app; right; exact Hb).
  f_equal. rewrite <- (turn_cost_groups s s' t E). f_equal. f_equal.
  destruct t as [b|c rs]; simpl.
  - rewrite H; auto. simpl. auto.
  - rewrite H by (simpl; left; auto). f_equal.
    rewrite (map_ext_in g (fun x => x)) by (intros r Hr; apply H; simpl; right; apply in_or_app; left; exact Hr).
    apply map_id.
Qed.

Definition cand_in (s : state) (b : block) (tf : bool) : Prop :=
  exists c rs, In (TC c rs) (turns s) /\ In b rs /\ tf = in_prompt (b_status c) /\
               b_status b = Visible /\ b_rej b = false.

Lemma candidates_in s n b tf : In (b, tf) (candidates s n) -> cand_in s b tf /\ b_id b <> n.
Proof.
  unfold candidates. intro H. apply in_flat_map in H. destruct H as [t [Ht H]].
  destruct t as [x|c rs]; [contradiction|]. apply in_map_iff in H.
  destruct H as [r [E H]]. inversion E; subst. apply filter_In in H. destruct H as [Hr F].
  destruct (b_status b) eqn:St; try discriminate.
  apply andb_true_iff in F. destruct F as [F1 F2]. apply negb_true_iff in F1, F2.
  split; [exists c, rs; repeat split; auto|]. apply Nat.eqb_neq. exact F2.
Qed.

(* Results are the only blocks answering a call (the protocol invariant). *)
Definition results_ok (s : state) : Prop :=
  forall c rs, In (TC c rs) (turns s) -> Forall (fun r => b_kind r = KResult) rs /\ b_kind c = KCall.

Definition owner_ok (s : state) : Prop :=
  pending s = [] \/ exists c, In c (blocks s) /\ b_id c = owner s /\ b_kind c = KCall.

Lemma offload_one s b tf :
  NoDup (map b_id (blocks s)) -> results_ok s -> owner_ok s -> cand_in s b tf ->
  content (offload_block s (b_id b)) + pick tf (b_c b) = content s + pick tf (b_p b).
Proof.
  intros N RK OW [c [rs [Ht [Hb [Htf [V J]]]]]].
  assert (Hbl : In b (blocks s)).
  { unfold blocks. apply in_flat_map. exists (TC c rs). split; auto. right. exact Hb. }
  destruct (RK c rs Ht) as [Kr Kc]. rewrite Forall_forall in Kr. specialize (Kr b Hb) as Kb.
  assert (Pr : protected s b = false).
  { unfold protected. rewrite V. destruct OW as [E|[c' [Hc' [I K']]]].
    - rewrite E. apply andb_false_r.
    - destruct (Nat.eqb_spec (b_id b) (owner s)) as [E|E]; [|reflexivity].
      exfalso. rewrite <- I in E. assert (U := find_unique _ _ N Hbl). rewrite E in U.
      rewrite (find_unique _ _ N Hc') in U. inversion U; subst. congruence. }
  unfold offload_block. cbv zeta.
  assert (F : find_block s (b_id b) = Some b) by (apply find_unique; auto).
  rewrite F. unfold content. cbn [cfg with_store update with_turns turns pending pending_msgs].
  unfold pending_msgs. cbn [pending].
  apply in_split in Ht. destruct Ht as [before [after E]].
  apply in_split in Hb. destruct Hb as [rb [ra Er]].
  set (G := fun x => if protected s x then x
                     else if b_id x =? b_id b
                          then set_block Offloaded None 1 (b_h x) (pos_cost s x) x else x).
  assert (NB : forall x, In x (blocks s) -> x <> b -> G x = x).
  { intros x Hx D. unfold G. destruct (protected s x); auto.
    destruct (Nat.eqb_spec (b_id x) (b_id b)) as [Ei|Ei]; auto. exfalso. apply D.
    assert (U := find_unique _ _ N Hx). rewrite Ei in U.
    assert (F' := F). unfold find_block in F'. rewrite F' in U. congruence. }
  assert (Gb : G b = set_block Offloaded None 1 (b_h b) (pos_cost s b) b).
  { unfold G. rewrite Pr, Nat.eqb_refl. reflexivity. }
  unfold blocks in N, NB, Hbl. rewrite E in N, NB |- *.
  rewrite !map_app, !flat_map_app, !costs_app. cbn [map flat_map].
  rewrite !costs_app.
  set (s' := with_store (update s _) (put (KB (b_id b)) (VRaw (b_data b)) (store s))).
  assert (Gr : groups s' = groups s) by reflexivity.
  rewrite (turns_cost_fixed s _ G before Gr).
  2: { intros x Hx. apply NB; [rewrite flat_map_app; apply in_or_app; left; exact Hx|].
       intro D. subst x. rewrite flat_map_app in N. rewrite map_app in N.
       apply (nodup_app_disj _ _ (b_id b) N); [apply in_map; exact Hx|].
       apply in_map. simpl. right. rewrite Er. apply in_or_app. left.
       apply in_or_app. right. left. reflexivity. }
  rewrite (turns_cost_fixed s _ G after Gr).
  2: { intros x Hx. apply NB; [rewrite flat_map_app; apply in_or_app; right; simpl; right;
                               apply in_or_app; right; exact Hx|].
       intro D. subst x. rewrite flat_map_app in N. rewrite map_app in N.
       apply nodup_app_r in N. simpl in N. inversion N as [|? ? N0 N1]. rewrite map_app in N1.
       apply (nodup_app_disj _ _ (b_id b) N1); [|apply in_map; exact Hx].
       apply in_map. rewrite Er. apply in_or_app. right. left. reflexivity. }
  assert (Gc : G c = c).
  { apply NB; [rewrite flat_map_app; apply in_or_app; right; left; reflexivity|].
    intro D. subst c. congruence. }
  simpl turn_msgs. rewrite Gc, !costs_app, (cost_groups s _ false c Gr).
  rewrite Er, !map_app, !flat_map_app, !costs_app. cbn [map flat_map]. rewrite !costs_app.
  rewrite <- Htf.
  assert (FX : forall l, (forall x, In x l -> G x = x) ->
            costs (flat_map (pos_msgs s' tf) (map G l))
            = costs (flat_map (pos_msgs s tf) l)).
  { intros l Hl. rewrite (map_ext_in G (fun x => x) l Hl), map_id, !costs_flat_map.
    f_equal. apply map_ext. intro x. apply cost_groups. exact Gr. }
  assert (Nrs : NoDup (map b_id (c :: rb ++ b :: ra))).
  { rewrite flat_map_app in N. rewrite map_app in N. apply nodup_app_r in N. simpl in N.
    rewrite map_app in N. simpl. rewrite <- Er.
    inversion N as [|? ? N0 N1]. apply nodup_app_l in N1. constructor; auto.
    intro I. apply N0. apply in_or_app. left. exact I. }
  rewrite (FX rb), (FX ra).
  2: { intros x Hx. apply NB.
       - rewrite flat_map_app. apply in_or_app. right. simpl. right. apply in_or_app. left.
         rewrite Er. apply in_or_app. right. right. exact Hx.
       - intro D. subst x. simpl in Nrs. inversion Nrs as [|? ? _ N2]. rewrite map_app in N2.
         simpl in N2. apply NoDup_remove_2 in N2. apply N2. apply in_or_app. right. apply in_map. exact Hx. }
  2: { intros x Hx. apply NB.
       - rewrite flat_map_app. apply in_or_app. right. simpl. right. apply in_or_app. left.
         rewrite Er. apply in_or_app. left. exact Hx.
       - intro D. subst x. simpl in Nrs. inversion Nrs as [|? ? _ N2]. rewrite map_app in N2.
         simpl in N2. apply NoDup_remove_2 in N2. apply N2. apply in_or_app. left. apply in_map. exact Hx. }
  rewrite Gb. unfold pos_msgs, set_block. cbn [b_status b_group b_id b_kind b_rej b_c b_p].
  unfold is_result. rewrite Kb. cbn. rewrite V. cbn. unfold wrap, pick.
  destruct tf, (b_rej b); unfold costs, sum; simpl; lia.
Qed.

Lemma offload_shape s x :
  exists G, turns (offload_block s x) = map (map_turn G) (turns s) /\
            (forall y, b_id y <> x -> G y = y) /\ (forall y, b_kind (G y) = b_kind y) /\
            pending (offload_block s x) = pending s /\ owner (offload_block s x) = owner s /\
            cfg (offload_block s x) = cfg s.
Proof.
  exists (fun b => if protected s b then b
           else if b_id b =? x then set_block Offloaded None 1 (b_h b) (pos_cost s b) b else b).
  unfold offload_block. cbv zeta.
  repeat split; try (destruct (find_block s x); reflexivity).
  - intros y D. destruct (protected s y); auto. destruct (Nat.eqb_spec (b_id y) x); [contradiction|auto].
  - intro y. destruct (protected s y); auto. destruct (b_id y =? x); reflexivity.
Qed.

Lemma offload_invariants s b tf :
  NoDup (map b_id (blocks s)) -> results_ok s -> owner_ok s -> cand_in s b tf ->
  let s' := offload_block s (b_id b) in
  NoDup (map b_id (blocks s')) /\ results_ok s' /\ owner_ok s' /\
  (forall b' tf', cand_in s b' tf' -> b_id b' <> b_id b -> cand_in s' b' tf').
Proof.
  intros N RK OW Cb s'.
  assert (Ids : map b_id (blocks s') = map b_id (blocks s))
    by exact (ids_of_regs _ _ (regs_offload_all [b_id b] s)).
  destruct (offload_shape s (b_id b)) as [G [T [GF [GK [GP [GO _]]]]]].
  fold s' in T, GP, GO.
  split; [rewrite Ids; exact N|]. split; [|split].
  - intros c' rs' H. rewrite T in H. apply in_map_iff in H. destruct H as [[x|c rs] [E H]]; inversion E; subst.
    destruct (RK c rs H) as [F K]. split; [|rewrite GK; exact K].
    rewrite Forall_forall in *. intros r Hr. apply in_map_iff in Hr. destruct Hr as [r0 [<- Hr0]].
    rewrite GK. apply F. exact Hr0.
  - unfold owner_ok in *. rewrite GP, GO. destruct OW as [E|[c [Hc [I K]]]]; [left; exact E|right].
    assert (R : In (registered c) (regs s')).
    { unfold s'. change (offload_block s (b_id b)) with (offload_all s [b_id b]).
      rewrite regs_offload_all. apply in_map. exact Hc. }
    apply in_map_iff in R. destruct R as [c' [E Hc']]. unfold registered in E. inversion E.
    exists c'. repeat split; auto; congruence.
  - intros b' tf' [c [rs [Ht [Hb [Htf [V J]]]]]] D.
    assert (Hbl : forall y, In y (turn_blocks (TC c rs)) -> In y (blocks s)).
    { intros y Hy. unfold blocks. apply in_flat_map. exists (TC c rs). auto. }
    assert (Gc : G c = c).
    { apply GF. intro E. destruct Cb as [c0 [rs0 [Ht0 [Hb0 _]]]].
      assert (Hb0' : In b (blocks s)) by (unfold blocks; apply in_flat_map; exists (TC c0 rs0); split; auto; right; auto).
      assert (Hc' : In c (blocks s)) by (apply Hbl; left; auto).
      assert (U1 := find_unique _ _ N Hb0'). assert (U2 := find_unique _ _ N Hc').
      rewrite E in U2. rewrite U1 in U2. inversion U2; subst.
      destruct (RK c0 rs0 Ht0) as [F0 _]. rewrite Forall_forall in F0.
      destruct (RK c rs Ht) as [_ Kc]. specialize (F0 c Hb0). congruence. }
    exists c, (map G rs). repeat split; auto.
    + rewrite T. replace (TC c (map G rs)) with (map_turn G (TC c rs)) by (simpl; rewrite Gc; reflexivity).
      apply in_map. exact Ht.
    + rewrite <- (GF b' D). apply in_map. exact Hb.
Qed.

Definition psum (l : list (block * bool)) (sel : block -> nat * nat) : nat :=
  sum (map (fun e => pick (snd e) (sel (fst e))) l).

Lemma offload_all_cost (cs : list (block * bool)) : forall s,
  NoDup (map b_id (blocks s)) -> results_ok s -> owner_ok s ->
  NoDup (map (fun e => b_id (fst e)) cs) -> (forall e, In e cs -> cand_in s (fst e) (snd e)) ->
  content (offload_all s (map (fun e => b_id (fst e)) cs)) + psum cs b_c = content s + psum cs b_p.
Proof.
  induction cs as [|[b tf] cs IH]; intros s N RK OW ND C; [unfold psum; simpl; lia|].
  simpl. inversion ND as [|? ? ND0 ND1]; subst.
  assert (Cb : cand_in s b tf) by exact (C (b, tf) (or_introl eq_refl)).
  destruct (offload_invariants s b tf N RK OW Cb) as [N' [RK' [OW' P']]].
  assert (One := offload_one s b tf N RK OW Cb).
  assert (Rest := IH (offload_block s (b_id b)) N' RK' OW' ND1).
  assert (Rest' : content (offload_all (offload_block s (b_id b)) (map (fun e => b_id (fst e)) cs))
                  + psum cs b_c = content (offload_block s (b_id b)) + psum cs b_p).
  { apply Rest. intros [b' tf'] H. apply P'. apply (C (b', tf')). right. exact H.
    intro E. apply ND0. apply in_map_iff. exists (b', tf'). auto. }
  change (offload_all s (b_id b :: map (fun e => b_id (fst e)) cs))
    with (offload_all (offload_block s (b_id b)) (map (fun e => b_id (fst e)) cs)).
  unfold psum in *. cbn [map]. rewrite !sum_cons. simpl in One |- *. lia.
Qed.

(* ------------------------------------------------------------------ *)
(* The rounds offload a prefix of the order; an admission is a fitting
   evaluation. *)

Lemma take_plan_prefix cs : forall P Q e acc plan rest,
  take_plan cs P Q e acc = (plan, rest, true) ->
  exists pre, cs = pre ++ rest /\ plan = rev acc ++ map (fun x => b_id (fst x)) pre.
Proof.
  induction cs as [|[x tf] cs IH]; intros P Q e acc plan rest H; simpl in H.
  - exists []. destruct (e + Q <=? P); inversion H; subst. simpl. rewrite app_nil_r. auto.
  - destruct (e + (Q + pick tf (b_p x)) <=? P + pick tf (b_c x)).
    + inversion H; subst. exists [(x, tf)]. split; auto.
    + destruct (IH _ _ _ _ _ _ H) as [pre [E1 E2]]. exists ((x, tf) :: pre). split.
      * rewrite E1. reflexivity.
      * rewrite E2. simpl. rewrite <- app_assoc. reflexivity.
Qed.

Lemma rounds_admit f : forall s cs e ds i dn off,
  rounds f s cs e ds i dn = (GAdmit, off) ->
  exists k pre rest, cs = pre ++ rest /\ off = dn ++ map (fun x => b_id (fst x)) pre /\
    total_with (offload_all s (map (fun x => b_id (fst x)) pre)) (dash_at ds k) <= hard (cfg s).
Proof.
  induction f as [|f IH]; intros s cs e ds i dn off H; simpl in H; [discriminate|].
  destruct (take_plan cs 0 0 e []) as [[plan rest] enough] eqn:T.
  destruct enough; simpl in H; [|discriminate].
  destruct (take_plan_prefix _ _ _ _ _ _ _ T) as [pre [E1 E2]]. simpl in E2. subst plan.
  destruct (total_with (offload_all s (map (fun x => b_id (fst x)) pre)) (dash_at ds (S i))
              <=? hard (cfg s)) eqn:L.
  - inversion H; subst. exists (S i), pre, rest. repeat split; auto. apply Nat.leb_le. exact L.
  - destruct (IH _ _ _ _ _ _ _ H) as [k [pre' [rest' [F1 [F2 F3]]]]].
    exists k, (pre ++ pre'), rest'. repeat split.
    + rewrite E1, F1, app_assoc. reflexivity.
    + rewrite F2, map_app, app_assoc. reflexivity.
    + rewrite cfg_offload_all in F3. rewrite map_app. unfold offload_all in *. rewrite fold_left_app.
      exact F3.
Qed.

Lemma decide_admit s1 r pc ds off :
  decide s1 r pc ds = (GAdmit, off) ->
  exists k pre rest, guard_order s1 (b_id r) (candidates s1 (b_id r)) = pre ++ rest /\
    off = map (fun x => b_id (fst x)) pre /\
    total_with (offload_all s1 off) (dash_at ds k) <= hard (cfg s1).
Proof.
  unfold decide. intro H.
  destruct (_ <? _); [discriminate|].
  destruct (total_with s1 (dash_at ds 0) <=? hard (cfg s1)) eqn:L.
  - inversion H; subst. exists 0, [], (guard_order s1 (b_id r) (candidates s1 (b_id r))).
    repeat split; auto.
    apply Nat.leb_le. exact L.
  - destruct (rounds_admit _ _ _ _ _ _ _ _ H) as [k [pre [rest [E1 [E2 E3]]]]].
    exists k, pre, rest. simpl in E2. subst off. auto.
Qed.

(* ------------------------------------------------------------------ *)
(* Candidates are distinct visible results. *)

Lemma nodup_app' {A} (l l' : list A) :
  NoDup l -> NoDup l' -> (forall x, In x l -> ~ In x l') -> NoDup (l ++ l').
Proof.
  induction l as [|a l IH]; intros N N' D; simpl; auto. inversion N; subst. constructor.
  - intro I. apply in_app_or in I. destruct I as [I|I]; [contradiction|]. exact (D a (or_introl eq_refl) I).
  - apply IH; auto. intros x Ix. apply D. right. exact Ix.
Qed.

Lemma nodup_filter_ids (P : block -> bool) rs : NoDup (map b_id rs) -> NoDup (map b_id (filter P rs)).
Proof.
  induction rs as [|x rs IH]; simpl; intro N; auto. inversion N; subst.
  destruct (P x); simpl; auto. constructor; auto. intro I. apply H1.
  apply in_map_iff in I. destruct I as [y [E I]]. apply filter_In in I. rewrite <- E. apply in_map. apply I.
Qed.

Lemma candidates_nodup s n : NoDup (map b_id (blocks s)) -> NoDup (map (fun e => b_id (fst e)) (candidates s n)).
Proof.
  unfold candidates, blocks. induction (turns s) as [|t ts IH]; simpl; intro N; [constructor|].
  rewrite map_app in N |- *. apply nodup_app'.
  - destruct t as [b|c rs]; simpl; [constructor|]. rewrite map_map. simpl.
    simpl in N. inversion N; subst. apply nodup_app_l in H2. apply nodup_filter_ids. exact H2.
  - apply IH. apply nodup_app_r in N. exact N.
  - intros x Ix Iy. destruct t as [b|c rs]; [contradiction|].
    simpl in Ix. rewrite map_map in Ix. simpl in Ix. apply in_map_iff in Ix. destruct Ix as [y [E Iy']].
    apply filter_In in Iy'. destruct Iy' as [Iy' _].
    apply in_map_iff in Iy. destruct Iy as [[z tf] [Ez Iz]]. simpl in Ez.
    apply in_flat_map in Iz. destruct Iz as [t' [Ht' Iz]].
    destruct t' as [b'|c' rs']; [contradiction|]. apply in_map_iff in Iz.
    destruct Iz as [w [Ew Iw]]. inversion Ew; subst z tf. apply filter_In in Iw. destruct Iw as [Iw _].
    apply (nodup_app_disj (b_id c :: map b_id rs) _ x N).
    + right. rewrite <- E. apply in_map. exact Iy'.
    + rewrite <- Ez. apply in_map. apply in_flat_map. exists (TC c' rs'). split; auto. right. exact Iw.
Qed.

(* The guard's order is a reordering of the candidates. *)
Lemma partition_perm {A} (f : A -> bool) l : Permutation l (filter f l ++ filter (fun x => negb (f x)) l).
Proof.
  induction l as [|x l IH]; [constructor|]. cbn [filter]. destruct (f x); cbn [negb app].
  - constructor. exact IH.
  - apply Permutation_cons_app. exact IH.
Qed.

(* The candidates the guard may offload: with keep_pending, while the batch
   waits, those before its call. *)
Definition guard_pool (s1 : state) (cs : list (block * bool)) : list (block * bool) :=
  if tail_on s1 then filter (fun e => b_id (fst e) <? owner s1) cs else cs.

Lemma guard_order_perm s1 n cs : Permutation (guard_pool s1 cs) (guard_order s1 n cs).
Proof.
  unfold guard_order, guard_pool. destruct (cache_prefix (cfg s1)); [apply partition_perm|reflexivity].
Qed.

Lemma nodup_map_filter {A B} (f : A -> B) (P : A -> bool) l :
  NoDup (map f l) -> NoDup (map f (filter P l)).
Proof.
  induction l as [|x l IH]; intro N; [constructor|]. cbn [filter map] in *. inversion N; subst.
  destruct (P x); [|auto]. cbn [map]. constructor; [|auto].
  intro I. apply in_map_iff in I. destruct I as [y [E Iy]]. apply filter_In in Iy.
  apply H1. rewrite <- E. apply in_map. tauto.
Qed.

Lemma guard_pool_nodup s1 cs :
  NoDup (map (fun e => b_id (fst e)) cs) -> NoDup (map (fun e => b_id (fst e)) (guard_pool s1 cs)).
Proof. unfold guard_pool. destruct (tail_on s1); [apply nodup_map_filter|auto]. Qed.

Lemma guard_pool_in s1 cs e : In e (guard_pool s1 cs) -> In e cs.
Proof. unfold guard_pool. destruct (tail_on s1); [intro H; apply filter_In in H; tauto|auto]. Qed.

Lemma guard_order_nodup s1 n cs :
  NoDup (map (fun e => b_id (fst e)) cs) -> NoDup (map (fun e => b_id (fst e)) (guard_order s1 n cs)).
Proof.
  intro N. apply (Permutation_NoDup (Permutation_map _ (guard_order_perm s1 n cs))).
  apply guard_pool_nodup. exact N.
Qed.

Lemma guard_order_in s1 n cs e : In e (guard_order s1 n cs) -> In e cs.
Proof.
  intro H. apply (guard_pool_in s1). apply (Permutation_in e (Permutation_sym (guard_order_perm s1 n cs))).
  exact H.
Qed.

(* ------------------------------------------------------------------ *)
(* Registering the result: its tool message replaces its pending placeholder. *)

Lemma content_same X Y :
  cfg Y = cfg X -> turns Y = turns X -> pending Y = pending X -> groups Y = groups X ->
  content Y = content X.
Proof.
  intros C T P G. unfold content, pending_msgs. rewrite C, T, P, !costs_flat_map.
  rewrite (map_ext (fun t => costs (turn_msgs Y t)) (fun t => costs (turn_msgs X t))); [reflexivity|].
  intro t. apply turn_cost_groups. exact G.
Qed.

Lemma pend_cost_remove p cid :
  costs (map (fun q => mkMsg (PPending (fst q)) FPending (RTool (fst q)) (snd q) SNone)
             (remove_pending cid p)) + sp_pend_cost p cid =
  costs (map (fun q => mkMsg (PPending (fst q)) FPending (RTool (fst q)) (snd q) SNone) p).
Proof.
  induction p as [|[i c] p IH]; simpl; auto.
  rewrite Nat.eqb_sym. destruct (cid =? i); simpl; unfold costs, sum in *; simpl in *; lia.
Qed.

Lemma add_content X rb cid o n g before c rs :
  turns X = before ++ [TC c rs] -> b_status c = Visible ->
  b_kind rb = KResult -> b_status rb = Visible ->
  content (with_counts (with_pending (with_turns X (add_result (turns X) rb))
                          (remove_pending cid (pending X)) o) n g) + sp_pend_cost (pending X) cid
  = content X + fst (b_c rb).
Proof.
  intros E V K Vr. unfold content at 1. cbn [cfg turns pending with_counts with_pending with_turns].
  assert (A : add_result (turns X) rb = before ++ [TC c (rs ++ [rb])]).
  { unfold add_result. rewrite E, rev_app_distr. simpl. rewrite rev_involutive. reflexivity. }
  rewrite A. unfold pending_msgs at 1. cbn [pending with_counts with_pending with_turns].
  rewrite <- Nat.add_assoc, pend_cost_remove. unfold content. rewrite E.
  set (Y := with_counts (with_pending (with_turns X (before ++ [TC c (rs ++ [rb])]))
                          (remove_pending cid (pending X)) o) n g).
  assert (G : groups Y = groups X) by reflexivity.
  rewrite !flat_map_app, !costs_app, !costs_flat_map.
  rewrite (map_ext (fun t => costs (turn_msgs Y t)) (fun t => costs (turn_msgs X t)))
    by (intro; apply turn_cost_groups; exact G).
  cbn [flat_map map]. rewrite !sum_cons, !sum_nil.
  simpl turn_msgs. rewrite !costs_app, !costs_flat_map, map_app, sum_app.
  rewrite (cost_groups X Y false c G). rewrite V. cbn [in_prompt].
  rewrite (map_ext (fun x => costs (pos_msgs Y true x)) (fun x => costs (pos_msgs X true x)))
    by (intro; apply cost_groups; exact G).
  cbn [map]. rewrite sum_cons, sum_nil.
  assert (Rb : costs (pos_msgs Y true rb) = fst (b_c rb)).
  { unfold pos_msgs. rewrite Vr. unfold is_result. rewrite K. cbn. unfold wrap.
    destruct (b_rej rb); unfold costs, sum; simpl; lia. }
  rewrite Rb. unfold pending_msgs. lia.
Qed.

Lemma turns_ok_results ts pend own :
  turns_ok ts pend own -> forall c rs, In (TC c rs) ts ->
  Forall (fun r => b_kind r = KResult) rs /\ b_kind c = KCall.
Proof.
  revert pend. induction ts as [|t ts IH]; intros pend H c rs I; [contradiction|].
  assert (T : turn_ok t [] own \/ turn_ok t pend own).
  { destruct ts; simpl in H; [right; exact H|left; apply H]. }
  destruct I as [E|I].
  - subst t. destruct T as [T|T]; simpl in T; destruct T as [K [_ [_ [_ [F _]]]]]; auto.
  - destruct ts as [|t' ts]; [contradiction|]. destruct H as [_ H]. exact (IH _ H c rs I).
Qed.

Lemma nth_error_default (l : list nat) : forall k d,
  match nth_error l k with Some x => x | None => d end = nth k l d.
Proof. induction l as [|x l IH]; intros k d; destruct k; simpl; auto. Qed.

Lemma sp_dash_at_eq ds k : sp_dash_at ds k = dash_at ds k.
Proof. unfold sp_dash_at, dash_at. apply nth_error_default. Qed.

(* ------------------------------------------------------------------ *)
(* The state the guard evaluates ([s1]: the result appended, visible). *)

Section Registered.
Variables (s : state) (cid data : nat) (cc p : nat * nat) (t notice : nat) (nc : nat * nat)
          (ds : list nat).
Hypotheses (P : proto_inv s) (Ok : ids_ok s)
           (Ex : existsb (fun q => fst q =? cid) (pending s) = true)
           (L : last_is_call (turns s) = true).

Let n := S (nblocks s).
Let rb := mkBlock n KResult data cid [] cc p t false Visible None 0 (0, 0) 0.
Let s1 := with_counts (with_pending (with_turns s (add_result (turns s) rb))
            (remove_pending cid (pending s)) (owner s)) n (ngroups s).

Lemma reg_pending_ne : pending s <> [].
Proof. destruct (pending s); [discriminate Ex|discriminate]. Qed.

Lemma reg_last : exists before c rs, turns s = before ++ [TC c rs] /\ b_id c = owner s /\
                                     b_kind c = KCall /\ b_status c = Visible.
Proof.
  apply (last_call _ _ _ P). pose proof reg_pending_ne as Ne.
  destruct (pending s); [contradiction|discriminate].
Qed.

Lemma reg_blocks1 : blocks s1 = blocks s ++ [rb].
Proof. unfold s1, blocks. cbn [turns with_counts with_pending with_turns]. apply blocks_add_result. exact L. Qed.

Lemma reg_nodup1 : NoDup (map b_id (blocks s1)).
Proof.
  rewrite reg_blocks1, map_app. apply nodup_app'; [apply ids_nodup; exact Ok|repeat constructor; auto|].
  intros x Ix [E|[]]. apply in_map_iff in Ix. destruct Ix as [b [Eb Hb]].
  pose proof (ids_below s b Ok Hb). simpl in E. unfold n in E. lia.
Qed.

Lemma reg_results0 : results_ok s.
Proof. intros c rs H. exact (turns_ok_results _ _ _ P c rs H). Qed.

Lemma reg_results1 : results_ok s1.
Proof.
  intros c rs H. apply (turns_ok_results (turns s1) (remove_first cid (map fst (pending s))) (owner s)); auto.
  unfold s1. cbn [turns with_counts with_pending with_turns].
  apply turns_ok_add_result; auto.
  apply existsb_exists in Ex. destruct Ex as [q [Hq E]]. apply Nat.eqb_eq in E.
  apply in_map_iff. exists q; auto.
Qed.

Lemma reg_owner0 : owner_ok s.
Proof.
  right. destruct reg_last as [before [c [rs [E [I [K _]]]]]]. exists c. repeat split; auto.
  unfold blocks. rewrite E. apply in_blocks_app_turn with (after := []). left. reflexivity.
Qed.

Lemma reg_owner1 : owner_ok s1.
Proof.
  right. destruct reg_owner0 as [E|[c [Hc [I K]]]]; [exfalso; exact (reg_pending_ne E)|].
  exists c. rewrite reg_blocks1. repeat split; auto. apply in_or_app. left. exact Hc.
Qed.

Lemma reg_turns1 before c rs : turns s = before ++ [TC c rs] ->
  turns s1 = before ++ [TC c (rs ++ [rb])].
Proof.
  intro E. unfold s1. cbn [turns with_counts with_pending with_turns].
  unfold add_result. rewrite E, rev_app_distr. simpl. rewrite rev_involutive. reflexivity.
Qed.

Lemma reg_cand x tf : cand_in s1 x tf -> b_id x <> n -> cand_in s x tf.
Proof.
  intros [c' [rs' [Ht [Hb R]]]] D. destruct reg_last as [before [c [rs [E _]]]].
  rewrite (reg_turns1 _ _ _ E) in Ht. apply in_app_or in Ht. destruct Ht as [Ht|[Ht|[]]].
  - exists c', rs'. split; auto. rewrite E. apply in_or_app. left. exact Ht.
  - inversion Ht; subst. apply in_app_or in Hb. destruct Hb as [Hb|[Hb|[]]].
    + exists c', rs. split; [rewrite E; apply in_or_app; right; left; reflexivity|]. auto.
    + subst x. exfalso. apply D. reflexivity.
Qed.

Lemma reg_content1 : content s1 + sp_pend_cost (pending s) cid = content s + fst cc.
Proof.
  destruct reg_last as [before [c [rs [E [_ [_ V]]]]]].
  exact (add_content s rb cid (owner s) n (ngroups s) before c rs E V eq_refl eq_refl).
Qed.

(* Offloading the first results of the guard's order from s1 or from s costs the same. *)
Lemma reg_offload pre rest :
  guard_order s1 n (candidates s1 n) = pre ++ rest ->
  content (offload_all s1 (map (fun e => b_id (fst e)) pre)) + sp_pend_cost (pending s) cid =
  content (offload_all s (map (fun e => b_id (fst e)) pre)) + fst cc.
Proof.
  intro Ec.
  assert (ND : NoDup (map (fun e => b_id (fst e)) pre)).
  { pose proof (guard_order_nodup s1 n _ (candidates_nodup s1 n reg_nodup1)) as X.
    rewrite Ec, map_app in X. exact (nodup_app_l _ _ X). }
  assert (C1 : forall e, In e pre -> cand_in s1 (fst e) (snd e) /\ b_id (fst e) <> n).
  { intros [x tf] H. apply candidates_in. apply (guard_order_in s1 n). rewrite Ec.
    apply in_or_app. left. exact H. }
  assert (O1 := offload_all_cost pre s1 reg_nodup1 reg_results1 reg_owner1 ND
                  (fun e H => proj1 (C1 e H))).
  assert (O0 := offload_all_cost pre s (ids_nodup s Ok) reg_results0 reg_owner0 ND
                  (fun e H => reg_cand _ _ (proj1 (C1 e H)) (proj2 (C1 e H)))).
  pose proof reg_content1. lia.
Qed.

End Registered.

Lemma guard_fits s cid data cc p t notice nc ds :
  proto_inv s -> ids_ok s ->
  let o := OResult cid data cc p t notice nc ds in
  r_ok (snd (step s o)) = None -> r_guard (snd (step s o)) = GAdmit ->
  exists k, sp_content (fst (step s o)) + sp_dash_at ds k <= hard (cfg s).
Proof.
  intros P Ok o R G. unfold o in *. clear o. cbn [step] in *. unfold reg_result in *.
  destruct (negb (existsb (fun q => fst q =? cid) (pending s) && last_is_call (turns s))) eqn:N;
    [simpl in R; discriminate|].
  apply Bool.negb_false_iff, andb_true_iff in N. destruct N as [Ex L].
  destruct (decide _ _ _ ds) as [g off] eqn:D. cbn [fst snd] in *.
  wf_split_all; [|cbn in R; discriminate]. cbn [r_guard] in G.
  pose proof (pend_guard_admit _ _ _ G) as G0. subst g. rewrite G.
  destruct (decide_admit _ _ _ _ _ D) as [k [pre [rest [Ec [Eoff Fit]]]]].
  exists k. rewrite sp_dash_at_eq, sp_content_eq. rewrite total_with_content in Fit.
  cbn [b_id] in Ec.
  pose proof (reg_offload s cid data cc p t P Ok Ex L pre rest Ec) as RO.
  rewrite <- Eoff in RO. cbn iota.
  set (s2 := offload_all s off) in *.
  assert (P2 : proto_inv s2) by exact (proto_offload_all off s P).
  destruct (pending_offload_all off s) as [Pe2 Ow2]. fold s2 in Pe2, Ow2.
  assert (Ne : map fst (pending s2) <> []).
  { rewrite Pe2. destruct (pending s); [discriminate Ex|discriminate]. }
  destruct (last_call _ _ _ P2 Ne) as [before2 [c2 [rs2 [Et2 [_ [_ Vc2]]]]]].
  assert (A2 := add_content s2 (mkBlock (S (nblocks s)) KResult data cid [] cc p t false Visible None 0 (0, 0) 0)
                  cid (owner s) (S (nblocks s)) (ngroups s) before2 c2 rs2 Et2 Vc2 eq_refl eq_refl).
  rewrite Pe2 in A2.
  match goal with
  | |- content (with_dash ?X ?d) + _ <= _ =>
      rewrite (content_same X (with_dash X d) eq_refl eq_refl eq_refl eq_refl)
  end.
  cbn [b_c fst] in A2. cbn [cfg with_counts with_pending with_turns] in Fit. lia.
Qed.

(* ------------------------------------------------------------------ *)
(* With one dashboard figure the guard offloads exactly the shortest prefix
   of its order whose gains cover the excess. *)

Definition gain (e : block * bool) : nat * Z :=
  (b_id (fst e), (Z.of_nat (pick (snd e) (b_c (fst e))) - Z.of_nat (pick (snd e) (b_p (fst e))))%Z).

Lemma take_cover cs : forall P Q e acc,
  (Z.of_nat e + Z.of_nat Q - Z.of_nat P > 0)%Z ->
  match take_plan cs P Q e acc with
  | (plan, rest, true) =>
      exists pre, cs = pre ++ rest /\ plan = rev acc ++ map (fun x => b_id (fst x)) pre /\
        sp_cover (map gain cs) (Z.of_nat e + Z.of_nat Q - Z.of_nat P)%Z
          = Some (map (fun x => b_id (fst x)) pre) /\
        e + Q + psum pre b_p <= P + psum pre b_c
  | (_, _, false) => sp_cover (map gain cs) (Z.of_nat e + Z.of_nat Q - Z.of_nat P)%Z = None
  end.
Proof.
  induction cs as [|[x tf] cs IH]; intros P Q e acc H; simpl.
  - destruct (Nat.leb_spec (e + Q) P); [lia|].
    destruct (Z.leb_spec (Z.of_nat e + Z.of_nat Q - Z.of_nat P) 0); [lia|reflexivity].
  - destruct (Z.leb_spec (Z.of_nat e + Z.of_nat Q - Z.of_nat P) 0); [lia|].
    destruct (Nat.leb_spec (e + (Q + pick tf (b_p x))) (P + pick tf (b_c x))) as [F|F].
    + exists [(x, tf)]. split; [reflexivity|]. split; [reflexivity|]. split.
      * destruct cs as [|c cs]; simpl;
          (destruct (Z.leb_spec (Z.of_nat e + Z.of_nat Q - Z.of_nat P -
             (Z.of_nat (pick tf (b_c x)) - Z.of_nat (pick tf (b_p x)))) 0); [reflexivity|lia]).
      * unfold psum. simpl. unfold sum; simpl. lia.
    + assert (H' : (Z.of_nat e + Z.of_nat (Q + pick tf (b_p x)) - Z.of_nat (P + pick tf (b_c x)) > 0)%Z) by lia.
      specialize (IH _ _ _ (b_id x :: acc) H').
      replace (Z.of_nat e + Z.of_nat Q - Z.of_nat P -
               (Z.of_nat (pick tf (b_c x)) - Z.of_nat (pick tf (b_p x))))%Z
        with (Z.of_nat e + Z.of_nat (Q + pick tf (b_p x)) - Z.of_nat (P + pick tf (b_c x)))%Z by lia.
      destruct (take_plan cs _ _ e (b_id x :: acc)) as [[plan rest] [|]].
      * destruct IH as [pre [E1 [E2 [E3 E4]]]]. exists ((x, tf) :: pre).
        split; [rewrite E1; reflexivity|]. split; [rewrite E2; simpl; rewrite <- app_assoc; reflexivity|].
        split; [rewrite E3; reflexivity|]. unfold psum in *. simpl. unfold sum in *; simpl in *. lia.
      * rewrite IH. reflexivity.
Qed.

Lemma gains_turn (n : nat) (c : block) (rs : list block) :
  Forall (fun r => b_kind r = KResult) rs -> (forall r, In r rs -> b_id r <> n) ->
  map gain (map (fun r => (r, in_prompt (b_status c)))
               (filter (fun r => match b_status r with
                                 | Visible => negb (b_rej r) && negb (b_id r =? n)
                                 | _ => false end) rs)) =
  flat_map (fun r => match b_status r with
    | Visible => if b_rej r then []
                 else [(b_id r, (Z.of_nat (sp_cost r (sp_shown_in_prompt (b_status c)) (b_c r))
                                - Z.of_nat (sp_cost r (sp_shown_in_prompt (b_status c)) (b_p r)))%Z)]
    | _ => [] end) rs.
Proof.
  intros K D. induction rs as [|r rs IH]; [reflexivity|].
  inversion K as [|? ? Kr Krs]; subst.
  assert (Dr : b_id r =? n = false) by (apply Nat.eqb_neq; apply D; left; auto).
  assert (IH' := IH Krs (fun r' H => D r' (or_intror H))).
  cbn [filter flat_map].
  destruct (b_status r); cbn [andb negb]; try (rewrite IH'; reflexivity).
  rewrite Dr. destruct (b_rej r); cbn [andb negb]; [rewrite IH'; reflexivity|].
  cbn [map app]. rewrite IH'. f_equal.
  unfold gain, sp_cost, sp_is_result. cbn [fst snd]. rewrite Kr. cbn [andb].
  assert (E : sp_shown_in_prompt (b_status c) = in_prompt (b_status c)) by (destruct (b_status c); reflexivity).
  rewrite E. unfold pick. reflexivity.
Qed.

Lemma gains_turns (n : nat) ts :
  (forall c rs, In (TC c rs) ts -> Forall (fun r => b_kind r = KResult) rs) ->
  (forall b, In b (flat_map turn_blocks ts) -> b_id b <> n) ->
  map gain (flat_map (fun t => match t with
                     | TP _ => []
                     | TC c rs => map (fun r => (r, in_prompt (b_status c)))
                                    (filter (fun r => match b_status r with
                                                      | Visible => negb (b_rej r) && negb (b_id r =? n)
                                                      | _ => false end) rs)
                     end) ts) =
  flat_map (fun t => match t with
    | TP _ => []
    | TC c rs =>
        flat_map (fun r => match b_status r with
          | Visible => if b_rej r then []
                       else [(b_id r, (Z.of_nat (sp_cost r (sp_shown_in_prompt (b_status c)) (b_c r))
                                      - Z.of_nat (sp_cost r (sp_shown_in_prompt (b_status c)) (b_p r)))%Z)]
          | _ => [] end) rs
    end) ts.
Proof.
  intros K D. induction ts as [|t ts IH]; simpl; auto. rewrite map_app.
  rewrite IH; [| intros c rs H; apply (K c rs); right; exact H
              | intros b H; apply D; simpl; apply in_or_app; right; exact H].
  f_equal. destruct t as [b|c rs]; auto. apply gains_turn.
  - apply (K c rs). left. auto.
  - intros r Hr. apply D. simpl. right. apply in_or_app. left. exact Hr.
Qed.

Lemma sp_cover_nonpos l need : (need <= 0)%Z -> sp_cover l need = Some [].
Proof. intro H. destruct l; simpl; destruct (Z.leb_spec need 0); auto; lia. Qed.

Lemma filter_last_out (f : block -> bool) rs rb : f rb = false -> filter f (rs ++ [rb]) = filter f rs.
Proof. intro H. rewrite filter_app. simpl. rewrite H, app_nil_r. reflexivity. Qed.

Lemma map_filter_gain (f : nat -> bool) cs :
  map gain (filter (fun e => f (b_id (fst e))) cs) = filter (fun g => f (fst g)) (map gain cs).
Proof.
  induction cs as [|e cs IH]; [reflexivity|]. cbn [filter map]. unfold gain at 2. cbn [fst].
  destruct (f (b_id (fst e))); cbn [map]; rewrite IH; reflexivity.
Qed.

Lemma sp_answer_eq cid pe : sp_answer cid pe = remove_pending cid pe.
Proof. induction pe as [|[i c] r IH]; [reflexivity|]. cbn. rewrite IH. reflexivity. Qed.

Lemma sp_appended_eq s cid data cc p t :
  sp_appended s cid data cc p t =
  with_counts (with_pending (with_turns s (add_result (turns s)
      (mkBlock (S (nblocks s)) KResult data cid [] cc p t false Visible None 0 (0, 0) 0)))
    (remove_pending cid (pending s)) (owner s)) (S (nblocks s)) (ngroups s).
Proof. unfold sp_appended. rewrite sp_answer_eq. reflexivity. Qed.

Theorem guard_order s cid data cc p t notice nc dd :
  proto_inv s -> ids_ok s ->
  let o := OResult cid data cc p t notice nc [dd] in
  r_ok (snd (step s o)) = None -> r_guard (snd (step s o)) <> GRejectCap ->
  match sp_cover (sp_guard_order s cid data cc p t)
          (Z.of_nat (sp_content s + fst cc + dd - sp_pend_cost (pending s) cid)
           - Z.of_nat (hard (cfg s)))%Z with
  | Some plan => (r_guard (snd (step s o)) = GAdmit \/ r_guard (snd (step s o)) = GRejectPending)
                 /\ r_offloaded (snd (step s o)) = plan
  | None => r_guard (snd (step s o)) = GRejectHard /\ r_offloaded (snd (step s o)) = []
  end.
Proof.
  intros P Ok o R NC. unfold o in *. clear o. cbn [step] in *. unfold reg_result in *.
  destruct (negb (existsb (fun q => fst q =? cid) (pending s) && last_is_call (turns s))) eqn:N;
    [simpl in R; discriminate|].
  apply Bool.negb_false_iff, andb_true_iff in N. destruct N as [Ex L].
  destruct (decide _ _ _ [dd]) as [g off] eqn:D. cbn [fst snd] in *.
  wf_split_all; [|cbn in R; discriminate]. cbn [r_guard r_offloaded] in *.
  set (n := S (nblocks s)) in *.
  set (rb := mkBlock n KResult data cid [] cc p t false Visible None 0 (0, 0) 0) in *.
  set (s1 := with_counts (with_pending (with_turns s (add_result (turns s) rb))
               (remove_pending cid (pending s)) (owner s)) n (ngroups s)) in *.
  pose proof (reg_content1 s cid data cc p t P Ex) as HC. fold n rb s1 in HC.
  rewrite sp_content_eq.
  replace (content s + fst cc + dd - sp_pend_cost (pending s) cid) with (content s1 + dd) by lia.
  (* the guard's order: the results of s, which s1's candidates are *)
  assert (Cand : candidates s1 n = candidates s n).
  { destruct (reg_last s cid data cc p t P Ex) as [before [c [rs [E _]]]].
    assert (T1 := reg_turns1 s cid data cc p t before c rs E). fold n rb s1 in T1.
    unfold candidates. rewrite T1, E.
    rewrite !flat_map_app. f_equal. simpl. f_equal. f_equal.
    apply filter_last_out. unfold rb. simpl. rewrite Nat.eqb_refl. reflexivity. }
  assert (Gains0 : map gain (candidates s n) = sp_gains s).
  { unfold candidates, sp_gains. apply gains_turns.
    - intros c rs H. exact (proj1 (reg_results0 s P c rs H)).
    - intros b H. pose proof (ids_below s b Ok H). unfold n. lia. }
  assert (Gains : map gain (guard_order s1 n (candidates s n)) = sp_guard_order s cid data cc p t).
  { unfold guard_order, sp_guard_order. change (cfg s1) with (cfg s).
    rewrite (sp_appended_eq s cid data cc p t). fold n rb s1.
    assert (Kp : sp_keeps s1 = tail_on s1) by apply sp_keeps_eq.
    assert (Pool : map gain (if tail_on s1 then filter (fun e => b_id (fst e) <? owner s1) (candidates s n)
                             else candidates s n)
                   = if sp_keeps s1 then filter (fun g => Nat.ltb (fst g) (owner s)) (sp_gains s)
                     else sp_gains s).
    { rewrite Kp. destruct (tail_on s1); [|exact Gains0].
      rewrite (map_filter_gain (fun x => x <? owner s1)), Gains0. reflexivity. }
    cbv zeta. destruct (cache_prefix (cfg s)); [|exact Pool].
    assert (Ek : guard_cut s1 n =
                 let k0 := sp_cut s1 (budget (cfg s) - (fixed (cfg s) + sp_costs (sp_pinned s1) + mgmt (cfg s)
                                                        + sp_need s1)) in
                 if k0 <=? nblocks s then k0 else nblocks s).
    { unfold guard_cut, floor, pinned_cost. rewrite <- sp_pinned_eq, sp_costs_eq, sp_cut_eq.
      replace (sp_need s1) with (tail_need s1)
        by (unfold sp_need, tail_need; rewrite Kp, sp_kept_eq, sp_costs_eq; reflexivity).
      cbn zeta. change (cfg s1) with (cfg s). unfold n. rewrite Nat.sub_1_r. cbn [Nat.pred].
      match goal with |- Nat.min ?a _ = _ => destruct (Nat.leb_spec a (nblocks s)); lia end. }
    rewrite Ek. cbn zeta.
    match goal with |- context [filter (fun e => ?K <? b_id (fst e))] => set (k := K) end.
    rewrite map_app, (map_filter_gain (fun x => k <? x)), (map_filter_gain (fun x => negb (k <? x))), Pool.
    reflexivity. }
  assert (Cf : cfg s1 = cfg s) by reflexivity.
  unfold decide in D. cbn [b_c] in D. rewrite Cf in D.
  destruct (_ <? _); [inversion D; subst; cbn in NC; contradiction|].
  rewrite total_with_content in D. cbn [dash_at nth] in D.
  destruct (Nat.leb_spec (content s1 + dd) (hard (cfg s))) as [T0|T0].
  - inversion D; subst. rewrite sp_cover_nonpos by lia.
    split; [cbn [pend_guard]; destruct (_ && _); auto|auto].
  - cbn [rounds] in D. change (b_id rb) with n in D. rewrite Cand in D.
    set (e := content s1 + dd - hard (cfg s)) in *.
    assert (He : (Z.of_nat e + Z.of_nat 0 - Z.of_nat 0 > 0)%Z) by (unfold e; lia).
    pose proof (take_cover (guard_order s1 n (candidates s n)) 0 0 e [] He) as TC.
    replace (Z.of_nat (content s1 + dd) - Z.of_nat (hard (cfg s)))%Z
      with (Z.of_nat e + Z.of_nat 0 - Z.of_nat 0)%Z by (unfold e; lia).
    rewrite <- Gains.
    destruct (take_plan (guard_order s1 n (candidates s n)) 0 0 e []) as [[plan rest] [|]].
    + destruct TC as [pre [E1 [E2 [E3 E4]]]]. rewrite E3. simpl in E2. subst plan.
      cbn [negb] in D.
      assert (Ec : guard_order s1 n (candidates s1 n) = pre ++ rest) by (rewrite Cand; exact E1).
      assert (ND : NoDup (map (fun e => b_id (fst e)) pre)).
      { pose proof (guard_order_nodup s1 n _ (candidates_nodup s1 n (reg_nodup1 s cid data cc p t Ok L))) as X.
        rewrite Ec, map_app in X. exact (nodup_app_l _ _ X). }
      assert (Cin : forall x, In x pre -> cand_in s1 (fst x) (snd x)).
      { intros [x tf] H. apply (candidates_in s1 n). apply (guard_order_in s1 n). rewrite Ec.
        apply in_or_app. left. exact H. }
      assert (O1 := offload_all_cost pre s1 (reg_nodup1 s cid data cc p t Ok L)
                      (reg_results1 s cid data cc p t P Ex L) (reg_owner1 s cid data cc p t P Ex L) ND Cin).
      rewrite total_with_content in D. cbn [dash_at nth last] in D. rewrite Cf in D.
      destruct (Nat.leb_spec (content (offload_all s1 (map (fun x => b_id (fst x)) pre)) + dd)
                  (hard (cfg s))) as [T1|T1]; [|unfold e in E4; lia].
      inversion D; subst. split; [cbn [pend_guard]; destruct (_ && _); auto|auto].
    + rewrite TC. cbn [negb] in D. inversion D; subst. cbn [pend_guard]. auto.
Qed.

Theorem guard_run c d s0 ops cid data cc p t notice nc ds :
  init c d = Some s0 ->
  let s := run s0 ops in
  let o := OResult cid data cc p t notice nc ds in
  let s' := fst (step s o) in
  let r := snd (step s o) in
  r_ok r = None ->
  (exists b, sp_block s' (S (nblocks s)) = Some b /\ b_kind b = KResult /\ b_status b = Visible /\
     match r_guard r with
     | GAdmit => b_data b = data /\ b_rej b = false
     | _ => b_data b = notice /\ b_rej b = true
     end) /\
  (r_guard r = GRejectCap <->
     budget c < fst cc + fixed c + sp_pinned_cost s + sp_call_cost s + dfloor c) /\
  (r_guard r = GAdmit -> exists k, sp_content s' + sp_dash_at ds k <= hard c) /\
  (forall dd, ds = [dd] -> r_guard r <> GRejectCap ->
     match sp_cover (sp_guard_order s cid data cc p t)
             (Z.of_nat (sp_content s + fst cc + dd - sp_pend_cost (pending s) cid)
              - Z.of_nat (hard c))%Z with
     | Some plan => (r_guard r = GAdmit \/ r_guard r = GRejectPending) /\ r_offloaded r = plan
     | None => r_guard r = GRejectHard /\ r_offloaded r = []
     end).
Proof.
  intros I s o s' r R.
  assert (C : cfg s = c) by exact (run_cfg c d s0 ops I).
  assert (P : proto_inv s).
  { apply run_invariant; [exact (proto_init c d s0 I)|]. intros s1 o1 H. apply proto_step; exact H. }
  assert (Ok : ids_ok s).
  { apply run_invariant; [exact (proj1 (init_fresh c d s0 I))|].
    intros s1 o1 H. exact (proj1 (stable_step s1 o1 H)). }
  destruct (guard_new_and_cap s cid data cc p t notice nc ds P Ok R) as [A B].
  rewrite C in B. split; [exact A|]. split; [exact B|]. split.
  - intro G. rewrite <- C. exact (guard_fits s cid data cc p t notice nc ds P Ok R G).
  - intros dd E NC. subst ds. rewrite <- C. exact (guard_order s cid data cc p t notice nc dd P Ok R NC).
Qed.
