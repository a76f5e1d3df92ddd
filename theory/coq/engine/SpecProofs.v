(* The model (Model.v) meets the specification (Spec.v): the proofs behind
   Statements.v's workspace_fidelity, workspace_ledger and the strengthened
   budget statement. *)

From Coq Require Import List Arith Bool Lia PeanoNat ZArith.
Import ListNotations.
From VistaLabEngine Require Import Model Spec Theorems.

(* ------------------------------------------------------------------ *)
(* The specification's helpers compute what the model's do. *)

Lemma fold_left_plus l a : fold_left plus l a = a + sum l.
Proof.
  revert a; induction l as [|x l IH]; intro a; simpl; [lia|]. rewrite IH. unfold sum; simpl. lia.
Qed.

Lemma sp_sum_eq l : sp_sum l = sum l.
Proof. unfold sp_sum. rewrite fold_left_plus. lia. Qed.

Lemma sp_costs_eq ms : sp_costs ms = costs ms.
Proof. unfold sp_costs, costs. apply sp_sum_eq. Qed.

Lemma sp_key_eq_eq a b : sp_key_eq a b = key_eqb a b.
Proof. destruct a, b; reflexivity. Qed.

Lemma sp_lookup_eq k st : sp_lookup k st = lookup k st.
Proof.
  induction st as [|[k' v] r IH]; simpl; auto. rewrite sp_key_eq_eq, IH. reflexivity.
Qed.

Lemma sp_payload_eq s k : sp_payload s k = payload_at s k.
Proof. unfold sp_payload, payload_at. rewrite sp_lookup_eq. reflexivity. Qed.

Lemma sp_top_eq gs f x : sp_top gs f x = climb gs f x.
Proof.
  revert x; induction f as [|f IH]; intro x; simpl; [destruct (g_parent x); reflexivity|].
  destruct (g_parent x) as [p|]; auto.
Qed.

Lemma sp_top_of_eq s g : sp_top_of s g = top_group s g.
Proof.
  unfold sp_top_of, top_group, sp_group, find_group.
  destruct (find _ (groups s)); simpl; [rewrite sp_top_eq|]; reflexivity.
Qed.

Lemma sp_min_eq l : sp_min l = list_min 0 l.
Proof. induction l as [|x [|y l] IH]; simpl; auto. Qed.

Lemma sp_first_eq x : sp_first x = first_leaf x.
Proof. apply sp_min_eq. Qed.

Lemma sp_stub_eq n l : sp_stub_cost n l = assoc n l.
Proof. induction l as [|[m c] l IH]; simpl; rewrite ?IH; auto. Qed.

Lemma sp_max_eq l : sp_max l = list_max l.
Proof. induction l as [|x l IH]; simpl; rewrite ?IH; auto. Qed.

Lemma concat_map_flat {A B} (f : A -> list B) l : concat (map f l) = flat_map f l.
Proof. rewrite flat_map_concat_map. reflexivity. Qed.

Lemma sp_blocks_eq s : sp_blocks s = blocks s.
Proof. unfold sp_blocks, blocks. rewrite concat_map_flat. reflexivity. Qed.

(* ------------------------------------------------------------------ *)
(* Fidelity: every position shows its defined form. *)

Lemma sp_position_eq s tf b : pos_msgs s tf b = sp_position s tf b.
Proof.
  unfold pos_msgs, sp_position.
  destruct (b_status b), (b_group b) as [g0|]; cbv iota beta zeta;
  unfold wrap, sp_role, sp_text_role, sp_cost, sp_is_result,
    is_result, is_call, plain_role; rewrite ?sp_payload_eq;
  try (pose proof (sp_top_of_eq s g0) as E;
       destruct (sp_top_of s g0) as [g|], (top_group s g0) as [g'|]; try discriminate;
       try (injection E; intros <-));
  destruct (b_kind b), tf, (b_rej b); simpl; try reflexivity;
    rewrite ?sp_first_eq, ?sp_stub_eq, ?sp_payload_eq; reflexivity.
Qed.

Lemma sp_turn_eq s t : turn_msgs s t = sp_turn s t.
Proof.
  destruct t as [b|c rs]; simpl; rewrite ?sp_position_eq; auto.
  rewrite concat_map_flat. f_equal. apply flat_map_ext. intro. apply sp_position_eq.
Qed.

Lemma sp_candidate_eq s : normal_render s = sp_candidate s.
Proof.
  unfold normal_render, sp_candidate. rewrite concat_map_flat.
  rewrite (flat_map_ext _ _ (sp_turn_eq s)). reflexivity.
Qed.

Lemma sp_pinned_eq s : pinned_msgs s = sp_pinned s.
Proof.
  unfold pinned_msgs, sp_pinned. rewrite sp_blocks_eq, concat_map_flat.
  apply flat_map_ext. intro b. destruct (b_status b); auto. apply sp_position_eq.
Qed.

Lemma sp_candidate_tokens_eq s : sp_candidate_tokens s = total s.
Proof.
  unfold sp_candidate_tokens. rewrite sp_costs_eq, <- sp_candidate_eq.
  symmetry. apply total_is_rendering_cost.
Qed.

Lemma sp_shown_eq st : sp_shown_in_prompt st = in_prompt st.
Proof. destruct st; reflexivity. Qed.

Lemma sp_positions_eq s : sp_positions s = positions s.
Proof.
  unfold sp_positions, positions. rewrite concat_map_flat. apply flat_map_ext. intros [b|c rs].
  - cbn. rewrite sp_position_eq. reflexivity.
  - cbn. rewrite sp_position_eq, sp_shown_eq. f_equal. apply map_ext. intro r.
    rewrite sp_position_eq. reflexivity.
Qed.

Lemma sp_walk_eq p : sp_walk p = wcost p.
Proof. unfold sp_walk, wcost, sp_plain_pin, pinned_plain, sp_is_result, is_result. rewrite sp_costs_eq. reflexivity. Qed.

Lemma sp_fits_eq room ps : sp_fits room ps = fit room ps.
Proof.
  revert room; induction ps as [|p ps IH]; intro room; [reflexivity|].
  cbn [sp_fits fit]. rewrite sp_walk_eq, IH. reflexivity.
Qed.

Lemma sp_unit_start_eq f : forall k p q, (forall x, p x = q x) -> sp_unit_start f k p = back f k q.
Proof.
  induction f as [|f IH]; intros k p q E; [reflexivity|].
  cbn [sp_unit_start back]. rewrite E. destruct (_ && _); [apply IH; exact E|reflexivity].
Qed.

Lemma sp_pending_eq s : sp_pending s = pending_msgs s.
Proof. reflexivity. Qed.

Lemma sp_cut_eq s room : sp_cut s room = prefix_cut s room.
Proof.
  unfold sp_cut, prefix_cut. rewrite sp_positions_eq, sp_fits_eq.
  set (k0 := fit room (positions s)).
  assert (E : (match pending s with
               | [] => k0
               | _ => if Nat.leb k0 (owner s - 1) then k0 else owner s - 1
               end) = (match pending s with [] => k0 | _ => Nat.min k0 (owner s - 1) end)).
  { destruct (pending s); [reflexivity|]. destruct (Nat.leb_spec k0 (owner s - 1)); lia. }
  rewrite E. apply sp_unit_start_eq. intro x. rewrite concat_map_flat, sp_pending_eq. reflexivity.
Qed.

Lemma sp_mdash_eq s : sp_mdash s = mdash_cost s.
Proof. unfold sp_mdash, mdash_cost. destruct (Nat.leb_spec (mdash s) (mgmt (cfg s))); lia. Qed.

Lemma sp_keeps_eq s : sp_keeps s = tail_on s.
Proof. unfold sp_keeps, tail_on. destruct (pending s); reflexivity. Qed.

Lemma sp_kept_eq s : sp_kept s = tail_msgs s.
Proof.
  unfold sp_kept, tail_msgs, last_turn_msgs. rewrite sp_keeps_eq. destruct (tail_on s); [|reflexivity].
  rewrite sp_pending_eq. f_equal. destruct (turns s) as [|t0 ts] eqn:E; [reflexivity|].
  rewrite <- E. pose proof (app_removelast_last t0 (l := turns s) ltac:(rewrite E; discriminate)) as X.
  rewrite X at 1. rewrite rev_app_distr. cbn. rewrite sp_turn_eq. reflexivity.
Qed.

Lemma sp_kept_cut_eq s k : sp_kept_cut s k = kp_back s k.
Proof.
  unfold sp_kept_cut, kp_back. rewrite sp_keeps_eq, sp_positions_eq.
  replace (forallb _ (skipn k (positions s)))
    with (negb (existsb (fun p => is_pinned (fst p)) (skipn k (positions s)))).
  - destruct (_ && _); [|reflexivity]. apply sp_unit_start_eq. intro x.
    destruct (nth_error _ _); reflexivity.
  - induction (skipn k (positions s)) as [|p r IH]; [reflexivity|]. cbn. rewrite <- IH.
    unfold is_pinned. destruct (b_status (fst p)); reflexivity.
Qed.

Lemma sp_management_eq s : management_render s = sp_management s.
Proof.
  unfold management_render, sp_management. rewrite sp_mdash_eq, sp_kept_eq.
  destruct (cache_prefix (cfg s)); [|rewrite sp_pinned_eq; reflexivity].
  unfold shown_prefix, management_cut, pinned_cost.
  rewrite <- sp_pinned_eq, !sp_costs_eq, sp_cut_eq, sp_kept_cut_eq, sp_positions_eq, !concat_map_flat.
  reflexivity.
Qed.

Lemma sp_render_eq s : render s = sp_render s.
Proof.
  unfold render, sp_render, mode_of. rewrite sp_candidate_tokens_eq.
  destruct (total s <=? budget (cfg s)).
  - apply sp_candidate_eq.
  - apply sp_management_eq.
Qed.

Lemma in_sp_blocks s b : In b (sp_blocks s) -> exists t, In t (turns s) /\ In b (sp_blocks_of t).
Proof. unfold sp_blocks. intro H. apply in_concat in H. destruct H as [l [Hl Hb]].
  apply in_map_iff in Hl. destruct Hl as [t [<- Ht]]. eauto. Qed.

Lemma shown_in_candidate s b :
  In b (sp_blocks s) -> sp_shown_in_prompt (b_status b) = true ->
  exists m, In m (sp_candidate s) /\ m_pos m = PB (b_id b) /\ m_show m = SData (b_data b).
Proof.
  intros H V. destruct (in_sp_blocks s b H) as [t [Ht Hb]].
  assert (P : forall tf, exists m, In m (sp_position s tf b) /\ m_pos m = PB (b_id b) /\
                              m_show m = SData (b_data b)).
  { intro tf. unfold sp_position. destruct (b_status b); simpl in V; try discriminate V;
      eexists; (split; [left; reflexivity | split; reflexivity]). }
  assert (T : exists m, In m (sp_turn s t) /\ m_pos m = PB (b_id b) /\ m_show m = SData (b_data b)).
  { destruct t as [b0|c rs]; simpl in Hb.
    - destruct Hb as [<-|[]]. apply P.
    - destruct Hb as [<-|Hb].
      + destruct (P false) as [m [Hm E]]. exists m. split; auto. simpl. apply in_or_app; auto.
      + destruct (P (sp_shown_in_prompt (b_status c))) as [m [Hm E]]. exists m. split; auto.
        simpl. apply in_or_app. right. apply in_concat. exists (sp_position s (sp_shown_in_prompt (b_status c)) b).
        split; auto. apply in_map; auto. }
  destruct T as [m [Hm E]]. exists m. split; auto. unfold sp_candidate. apply in_or_app. left.
  apply in_concat. exists (sp_turn s t). split; auto. apply in_map; auto.
Qed.

Theorem fidelity_run c d s0 ops :
  init c d = Some s0 ->
  let s := run s0 ops in
  render s = sp_render s /\
  (sp_candidate_tokens s <= budget c ->
     forall b, In b (sp_blocks s) -> sp_shown_in_prompt (b_status b) = true ->
     exists m, In m (render s) /\ m_pos m = PB (b_id b) /\ m_show m = SData (b_data b)).
Proof.
  intros I s. assert (C : cfg s = c) by exact (run_cfg c d s0 ops I).
  split; [apply sp_render_eq|]. intros L b Hb V.
  rewrite sp_render_eq. unfold sp_render. rewrite C.
  destruct (Nat.leb_spec (sp_candidate_tokens s) (budget c)); [|lia].
  apply shown_in_candidate; auto.
Qed.

Theorem budget_forms_run c d s0 ops :
  init c d = Some s0 ->
  let s := run s0 ops in
  tokens s = sp_tokens s /\ sp_tokens s <= budget c.
Proof.
  intros I s. assert (C : cfg s = c) by exact (run_cfg c d s0 ops I).
  assert (E : tokens s = sp_tokens s).
  { unfold tokens, sp_tokens. rewrite sp_costs_eq, sp_render_eq. reflexivity. }
  split; [exact E|]. rewrite <- E, <- C. apply tokens_bound.
  unfold s. rewrite cfg_run. apply floor_run. rewrite (cfg_init c d s0 I).
  exact (floor_init c d s0 I).
Qed.

Lemma init_floor c d s : init c d = Some s -> fixed c + mgmt c <= budget c.
Proof. unfold init. destruct (fixed c + mgmt c <=? budget c) eqn:L; intro H; inversion H.
  apply Nat.leb_le in L. exact L. Qed.

(* ------------------------------------------------------------------ *)
(* The ledger: every row is the unit's state. *)

Definition e_blk (e : block * nat * option nat * bool) : block := fst (fst (fst e)).

Lemma rooted_blocks i ts : map e_blk (rooted i ts) = flat_map turn_blocks ts.
Proof.
  revert i; induction ts as [|[b|c rs] r IH]; intro i; simpl; auto.
  - rewrite IH. reflexivity.
  - rewrite map_app, IH. simpl. rewrite map_map. simpl. rewrite map_id. reflexivity.
Qed.

Lemma ids_in_turn n t :
  existsb (fun b => Nat.eqb (b_id b) n) (sp_blocks_of t) = true <-> In n (map b_id (turn_blocks t)).
Proof.
  rewrite existsb_exists, in_map_iff. destruct t; simpl; split.
  - intros [x [Hx E]]. apply Nat.eqb_eq in E. exists x. auto.
  - intros [x [E Hx]]. exists x. split; auto. apply Nat.eqb_eq; auto.
  - intros [x [Hx E]]. apply Nat.eqb_eq in E. exists x. auto.
  - intros [x [E Hx]]. exists x. split; auto. apply Nat.eqb_eq; auto.
Qed.

Lemma existsb_id_in n (l : list block) :
  existsb (fun b => Nat.eqb (b_id b) n) l = true <-> In n (map b_id l).
Proof.
  rewrite existsb_exists, in_map_iff. split.
  - intros [x [Hx E]]. apply Nat.eqb_eq in E. exists x. auto.
  - intros [x [E Hx]]. exists x. split; auto. apply Nat.eqb_eq; auto.
Qed.

Lemma not_in_parent ts n : ~ In n (map b_id (flat_map turn_blocks ts)) ->
  sp_parent_of ts n = None /\ sp_call_shown ts n = false.
Proof.
  induction ts as [|[b|c rs] r IH]; simpl; intro H;
    [auto | apply IH; intro I; apply H; right; exact I |].
  - destruct (existsb (fun b => Nat.eqb (b_id b) n) rs) eqn:E.
    + apply existsb_id_in in E. exfalso. apply H. right.
      rewrite map_app. apply in_or_app. left. exact E.
    + apply IH. intro I. apply H. right. rewrite map_app. apply in_or_app. right. exact I.
Qed.

Lemma nodup_app_r {A} (l l' : list A) : NoDup (l ++ l') -> NoDup l'.
Proof. induction l; simpl; intro H; auto. inversion H; auto. Qed.

Lemma nodup_app_l {A} (l l' : list A) : NoDup (l ++ l') -> NoDup l.
Proof.
  induction l; simpl; intro H; [constructor|]. inversion H; subst. constructor; auto.
  intro I. apply H2. apply in_or_app. left. exact I.
Qed.

Lemma nodup_app_disj {A} (l l' : list A) x : NoDup (l ++ l') -> In x l -> ~ In x l'.
Proof.
  induction l; simpl; intros H I; [contradiction|]. inversion H; subst.
  destruct I as [<-|I]; auto. intro J. apply H2. apply in_or_app. right. exact J.
Qed.

Lemma rooted_facts ts : forall i, NoDup (map b_id (flat_map turn_blocks ts)) ->
  forall b j par tf, In (b, j, par, tf) (rooted i ts) ->
  sp_turn_no ts i (b_id b) = j /\ sp_parent_of ts (b_id b) = par /\
  sp_call_shown ts (b_id b) = tf.
Proof.
  induction ts as [|t r IH]; intros i N b j par tf H; simpl in H; [contradiction|].
  simpl in N. rewrite map_app in N.
  destruct t as [b0|c rs].
  - simpl in N. inversion N as [|? ? N0 N1]; subst.
    destruct H as [H|H].
    + inversion H; subst. simpl. rewrite Nat.eqb_refl. simpl.
      destruct (not_in_parent r (b_id b) N0) as [P1 P2]. auto.
    + assert (Ib : In (b_id b) (map b_id (flat_map turn_blocks r))).
      { rewrite <- rooted_blocks with (i := S i). rewrite map_map. apply in_map_iff.
        exists (b, j, par, tf). auto. }
      assert (D : b_id b0 <> b_id b) by (intro E; apply N0; rewrite E; exact Ib).
      simpl. destruct (Nat.eqb_spec (b_id b0) (b_id b)); [contradiction|]. simpl.
      apply IH with (i := S i); auto.
  - simpl in N. inversion N as [|? ? N0 N1]; subst.
    pose proof (nodup_app_r _ _ N1) as Nr.
    assert (Case : (In b (c :: rs) /\ j = i /\
                    ((b = c /\ par = None /\ tf = false) \/
                     (In b rs /\ par = Some (b_id c) /\ tf = in_prompt (b_status c)))) \/
                   In (b, j, par, tf) (rooted (S i) r)).
    { destruct H as [H|H].
      - left. inversion H; subst. split; [left; auto|]. auto.
      - apply in_app_or in H. destruct H as [H|H]; [left|right; exact H].
        apply in_map_iff in H. destruct H as [x [E Hx]]. inversion E; subst.
        split; [right; auto|]. split; auto. }
    clear H. destruct Case as [Hin|H].
    + destruct Hin as [Hb [-> Hc]].
      assert (Hx : existsb (fun x => Nat.eqb (b_id x) (b_id b)) (c :: rs) = true).
      { apply existsb_id_in. apply in_map. exact Hb. }
      simpl in Hx |- *. rewrite Hx. split; [reflexivity|].
      destruct Hc as [[-> [-> ->]]|[Hr [-> ->]]].
      * assert (Nr' : ~ In (b_id c) (map b_id rs)) by (intro I; apply N0; apply in_or_app; left; exact I).
        destruct (existsb (fun b0 => Nat.eqb (b_id b0) (b_id c)) rs) eqn:E.
        { apply existsb_id_in in E. contradiction. }
        assert (Nt : ~ In (b_id c) (map b_id (flat_map turn_blocks r)))
          by (intro I; apply N0; apply in_or_app; right; exact I).
        destruct (not_in_parent r (b_id c) Nt). auto.
      * assert (E : existsb (fun b0 => Nat.eqb (b_id b0) (b_id b)) rs = true)
          by (apply existsb_id_in; apply in_map; exact Hr).
        rewrite E. split; reflexivity.
    + assert (Ib : In (b_id b) (map b_id (flat_map turn_blocks r))).
      { rewrite <- rooted_blocks with (i := S i). rewrite map_map. apply in_map_iff.
        exists (b, j, par, tf). auto. }
      assert (Nc : ~ In (b_id b) (map b_id (c :: rs))).
      { simpl. intros [E|I].
        - apply N0. rewrite E. apply in_or_app. right. exact Ib.
        - exact (nodup_app_disj _ _ _ N1 I Ib). }
      assert (Ex : existsb (fun x => Nat.eqb (b_id x) (b_id b)) (c :: rs) = false).
      { destruct (existsb _ (c :: rs)) eqn:E; auto. apply existsb_id_in in E. contradiction. }
      simpl in Ex |- *. rewrite Ex.
      assert (Er : existsb (fun x => Nat.eqb (b_id x) (b_id b)) rs = false).
      { destruct (existsb _ rs) eqn:E; auto. apply existsb_id_in in E.
        exfalso. apply Nc. right. exact E. }
      rewrite Er. apply IH with (i := S i); auto.
Qed.

Lemma find_app' {A} (f : A -> bool) l l' :
  find f (l ++ l') = match find f l with Some x => Some x | None => find f l' end.
Proof. induction l as [|x l IH]; simpl; auto. destruct (f x); auto. Qed.

Lemma find_rooted_eq ts : forall i n,
  match find (fun e => b_id (fst (fst (fst e))) =? n) (rooted i ts) with
  | Some e => snd (fst (fst e)) | None => 0 end = sp_turn_no ts i n.
Proof.
  induction ts as [|[b|c rs] r IH]; intros i n; simpl; auto.
  - destruct (b_id b =? n); simpl; auto.
  - destruct (b_id c =? n) eqn:Ec; simpl; auto.
    rewrite find_app'.
    destruct (find (fun e => b_id (fst (fst (fst e))) =? n)
                (map (fun x => (x, i, Some (b_id c), in_prompt (b_status c))) rs)) as [e|] eqn:F.
    + apply find_some in F. destruct F as [F1 F2]. apply in_map_iff in F1.
      destruct F1 as [x [<- Hx]]. simpl in F2.
      assert (E : existsb (fun b => b_id b =? n) rs = true)
        by (apply existsb_exists; exists x; auto).
      rewrite E. reflexivity.
    + assert (E : existsb (fun b => b_id b =? n) rs = false).
      { destruct (existsb _ rs) eqn:E; auto. apply existsb_exists in E.
        destruct E as [x [Hx Ex]].
        assert (N := find_none _ _ F (x, i, Some (b_id c), in_prompt (b_status c))).
        simpl in N. rewrite N in Ex; [discriminate|]. apply in_map_iff. exists x. auto. }
      rewrite E. apply IH.
Qed.

Lemma turn_of_block_eq s n : turn_of_block s n = sp_turn_no (turns s) 1 n.
Proof. unfold turn_of_block. apply find_rooted_eq. Qed.

Lemma flat_map_in_ext {A B} (f g : A -> list B) l :
  (forall x, In x l -> f x = g x) -> flat_map f l = flat_map g l.
Proof.
  induction l as [|x l IH]; simpl; intro H; auto. rewrite H by auto. rewrite IH; auto.
Qed.

Lemma flat_map_map' {A B C} (f : A -> B) (g : B -> list C) l :
  flat_map g (map f l) = flat_map (fun x => g (f x)) l.
Proof. induction l; simpl; auto. rewrite IHl. reflexivity. Qed.

Lemma group_rows_eq s id :
  flat_map (fun x => match g_parent x with
                     | None => if first_leaf x =? id then [group_row s x] else []
                     | Some _ => [] end) (groups s) =
  map (sp_group_row s) (filter (fun x => match g_parent x with
                                         | None => Nat.eqb (sp_first x) id
                                         | Some _ => false end) (groups s)).
Proof.
  induction (groups s) as [|x gs IH]; simpl; auto.
  destruct (g_parent x); auto. rewrite sp_first_eq.
  destruct (first_leaf x =? id); simpl; rewrite IH; auto.
  f_equal. unfold group_row, sp_group_row, sp_age, now.
  rewrite turn_of_block_eq, <- sp_max_eq. reflexivity.
Qed.

Lemma ledger_eq s : ids_ok s -> ledger s = sp_ledger s.
Proof.
  intro Ok. pose proof (ids_nodup s Ok) as N.
  unfold ledger, sp_ledger. rewrite sp_blocks_eq, concat_map_flat.
  unfold blocks. rewrite <- (rooted_blocks 1), flat_map_map'.
  apply flat_map_in_ext. intros [[[b j] par] tf] H. unfold e_blk; simpl.
  unfold blocks in N. destruct (rooted_facts (turns s) 1 N b j par tf H) as [F1 [F2 F3]].
  destruct (b_group b) as [g|].
  - apply group_rows_eq.
  - unfold sp_block_row, sp_age, now. rewrite F1, F2, F3, sp_costs_eq, <- sp_position_eq.
    destruct (b_status b), (b_kind b); reflexivity.
Qed.

(* The budget line: overhead and conversation as Spec.v counts them. *)
Lemma sum_filter {A} (p : A -> bool) (g : A -> nat) l :
  sum (map (fun x => if p x then g x else 0) l) = sum (map g (filter p l)).
Proof. induction l as [|x l IH]; simpl; auto. destruct (p x); simpl; unfold sum in *; simpl; lia. Qed.

Lemma sp_system_turn_eq t : sp_system_turn t = is_system_turn t.
Proof. destruct t as [b|]; reflexivity. Qed.

Lemma sp_overhead_eq s : overhead s = sp_overhead s.
Proof.
  unfold overhead, sp_overhead. rewrite sp_costs_eq, concat_map_flat, costs_flat_map.
  f_equal. rewrite (filter_ext _ _ sp_system_turn_eq).
  rewrite <- sum_filter. f_equal. apply map_ext. intro t. rewrite sp_turn_eq. reflexivity.
Qed.

Lemma sp_conversation_eq s : conversation s = sp_conversation s.
Proof.
  unfold conversation, sp_conversation. rewrite !sp_costs_eq, concat_map_flat, costs_flat_map.
  f_equal. rewrite (filter_ext (fun t => negb (sp_system_turn t)) (fun t => negb (is_system_turn t)))
    by (intro; rewrite sp_system_turn_eq; reflexivity).
  rewrite <- sum_filter. f_equal. apply map_ext. intro t. rewrite sp_turn_eq.
  destruct (is_system_turn t); reflexivity.
Qed.

Theorem ledger_run c d s0 ops :
  init c d = Some s0 ->
  let s := run s0 ops in
  ledger s = sp_ledger s /\
  overhead s = sp_overhead s /\ conversation s = sp_conversation s /\
  total s = sp_overhead s + sp_conversation s + dash s /\
  (mode_of s = Normal <-> sp_overhead s + sp_conversation s + dash s <= budget c).
Proof.
  intros I s. assert (C : cfg s = c) by exact (run_cfg c d s0 ops I).
  assert (Ok : ids_ok s).
  { apply run_invariant; [exact (proj1 (init_fresh c d s0 I))|].
    intros s1 o H. exact (proj1 (stable_step s1 o H)). }
  rewrite <- sp_overhead_eq, <- sp_conversation_eq.
  split; [apply ledger_eq; exact Ok|]. split; [reflexivity|]. split; [reflexivity|].
  split; [reflexivity|]. rewrite <- C. apply mode_normal.
Qed.
