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

Lemma sp_render_eq s : render s = sp_render s.
Proof.
  unfold render, sp_render, mode_of. rewrite sp_candidate_tokens_eq.
  destruct (total s <=? budget (cfg s)).
  - apply sp_candidate_eq.
  - unfold management_render, sp_management. rewrite sp_pinned_eq. reflexivity.
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
