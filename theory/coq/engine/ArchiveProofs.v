(* The archive contract on the engine model, for the handles of blocks
   archived or offloaded on their own (eq. archive-contract:
   read_path(h) == payload(S)).  Statements.v restates the theorem proved
   here ([archive_blocks_run]) in the paper's words. *)

From Coq Require Import List Arith Bool Lia PeanoNat.
Import ListNotations.
From VistaLabEngine Require Import Model Spec Theorems SpecProofs.

Definition handle_facts (s : state) (m : msg) (n : nat) (b : block) : Prop :=
  b_id b = n /\ b_group b = None /\ (b_status b = Archived \/ b_status b = Offloaded) /\
  m_show m = SHandle (KB n) (b_level b) (sp_payload s (KB n)).

(* A handle or placeholder naming a block is that block's own, archived or
   offloaded outside every group. *)
Lemma pos_handle s incall b m n :
  In m (sp_position s incall b) -> sp_handle_unit (m_form m) (m_pos m) = Some (UB n) ->
  handle_facts s m n b.
Proof.
  unfold sp_position. cbv zeta.
  destruct (b_status b) eqn:St;
  [..|destruct (sp_is_result b && incall)]; try destruct (sp_is_result b && b_rej b);
  try (destruct (b_group b) as [g0|] eqn:Gb; [destruct (sp_top_of s g0) as [g|];
         [destruct (Nat.eqb (sp_first g) (b_id b)); [|destruct (sp_is_result b && incall)]
         |destruct (sp_is_result b && incall)]|]);
  intros H U; repeat (destruct H as [H|H]; [subst m|]); try contradiction;
  cbn [sp_handle_unit m_form m_pos] in U; try discriminate;
  injection U as <-; repeat split; auto.
Qed.

Lemma in_turn_handle s t m n :
  In m (sp_turn s t) -> sp_handle_unit (m_form m) (m_pos m) = Some (UB n) ->
  exists b, In b (sp_blocks_of t) /\ handle_facts s m n b.
Proof.
  destruct t as [b|c rs]; cbn [sp_turn sp_blocks_of]; intros H U.
  - exists b. split; [left; reflexivity|]. exact (pos_handle _ _ _ _ _ H U).
  - apply in_app_iff in H. destruct H as [H|H].
    + exists c. split; [left; reflexivity|]. exact (pos_handle _ _ _ _ _ H U).
    + apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
      destruct Hl as [r [<- Hr]]. exists r. split; [right; exact Hr|].
      exact (pos_handle _ _ _ _ _ H U).
Qed.

(* Every entry of the positions list (Spec.v, sp_positions, used by the
   cache_prefix management rendering) is a block of the state with its
   rendering at one of the two call contexts. *)
Lemma in_positions s p :
  In p (sp_positions s) -> In (fst p) (sp_blocks s) /\ exists incall, snd p = sp_position s incall (fst p).
Proof.
  unfold sp_positions, sp_blocks. intro H. apply in_concat in H. destruct H as [l [Hl H]].
  apply in_map_iff in Hl. destruct Hl as [t [<- Ht]].
  assert (Bt : In (fst p) (sp_blocks_of t) /\ exists incall, snd p = sp_position s incall (fst p)).
  { destruct t as [b|c rs]; cbn [sp_blocks_of] in *.
    - destruct H as [<-|[]]. split; [left; reflexivity|]. exists false. reflexivity.
    - destruct H as [<-|H]; [split; [left; reflexivity|exists false; reflexivity]|].
      apply in_map_iff in H. destruct H as [r [<- Hr]].
      split; [right; exact Hr|]. eexists. reflexivity. }
  destruct Bt as [Bt E]. split; [|exact E].
  apply in_concat. exists (sp_blocks_of t). split; [apply in_map; exact Ht|exact Bt].
Qed.

Lemma in_firstn_sub {A} k (l : list A) x : In x (firstn k l) -> In x l.
Proof. intro H. rewrite <- (firstn_skipn k l). apply in_app_iff. left. exact H. Qed.

Lemma in_skipn_sub {A} k (l : list A) x : In x (skipn k l) -> In x l.
Proof. intro H. rewrite <- (firstn_skipn k l). apply in_app_iff. right. exact H. Qed.

Lemma positions_handle s p m n :
  In p (sp_positions s) -> In m (snd p) -> sp_handle_unit (m_form m) (m_pos m) = Some (UB n) ->
  exists b, In b (blocks s) /\ handle_facts s m n b.
Proof.
  intros Hp H U. destruct (in_positions s p Hp) as [B [incall E]].
  exists (fst p). split; [rewrite <- sp_blocks_eq; exact B|].
  rewrite E in H. exact (pos_handle _ _ _ _ _ H U).
Qed.

Lemma render_handle s m n :
  In m (sp_render s) -> sp_handle_unit (m_form m) (m_pos m) = Some (UB n) ->
  exists b, In b (blocks s) /\ handle_facts s m n b.
Proof.
  unfold sp_render. rewrite <- sp_blocks_eq. destruct (_ <=? _); intros H U.
  - unfold sp_candidate in H. apply in_app_iff in H. destruct H as [H|H].
    + apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
      destruct Hl as [t [<- Ht]]. destruct (in_turn_handle s t m n H U) as [b [Hb F]].
      exists b. split; [|exact F]. unfold sp_blocks. apply in_concat. exists (sp_blocks_of t).
      split; [apply in_map; exact Ht|exact Hb].
    + apply in_app_iff in H. destruct H as [H|[<-|[]]]; [|discriminate].
      unfold sp_pending in H. apply in_map_iff in H. destruct H as [p [<- _]]. discriminate.
  - unfold sp_management in H. apply in_app_iff in H. destruct H as [H|H].
    2: { apply in_app_iff in H. destruct H as [H|[<-|[]]]; [|discriminate].
         unfold sp_kept in H. destruct (sp_keeps s); [|destruct H].
         apply in_app_iff in H. destruct H as [H|H].
         - destruct (rev (turns s)) as [|t r] eqn:Er; [destruct H|].
           destruct (in_turn_handle s t m n H U) as [b [Hb F]].
           exists b. split; [|exact F]. unfold sp_blocks. apply in_concat. exists (sp_blocks_of t).
           split; [apply in_map; apply in_rev; rewrite Er; left; reflexivity|exact Hb].
         - unfold sp_pending in H. apply in_map_iff in H. destruct H as [p [<- _]]. discriminate. }
    destruct (cache_prefix (cfg s)).
    { (* cache_prefix: the leading run of positions, then the pinned ones after the cut *)
      cbv zeta in H. apply in_app_iff in H. destruct H as [H|H].
      - apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
        destruct Hl as [p [<- Hp]]. apply in_firstn_sub in Hp.
        rewrite sp_blocks_eq. exact (positions_handle s p m n Hp H U).
      - apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
        destruct Hl as [p [<- Hp]]. apply in_skipn_sub in Hp.
        destruct (sp_plain_pin (fst p)); [|destruct H].
        rewrite sp_blocks_eq. exact (positions_handle s p m n Hp H U). }
    unfold sp_pinned in H. apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
    destruct Hl as [b [<- Hb]]. exists b. split; [exact Hb|].
    destruct (b_status b); try contradiction. exact (pos_handle _ _ _ _ _ H U).
Qed.

Theorem archive_blocks_run (c : config) (d : nat) (s0 : state) (ops : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  forall m n, In m (render s) -> sp_handle_unit (m_form m) (m_pos m) = Some (UB n) ->
  m_show m = SHandle (sp_key_of (UB n)) (sp_level s (UB n)) (sp_payload s (sp_key_of (UB n))) /\
  sp_lookup (sp_key_of (UB n)) (store s) <> None /\
  sp_read_path s (sp_key_of (UB n)) = Some (sp_unit_payload s (UB n)).
Proof.
  intros Init s m n Hm U.
  assert (R : rec_inv s).
  { apply run_invariant; [exact (rec_init c d s0 Init)|]. intros t o H. apply rec_step, H. }
  destruct R as [I [[S1 S2] [Nd [_ C]]]].
  assert (Fe : render s = sp_render s) by exact (proj1 (fidelity_run c d s0 ops Init)).
  rewrite Fe in Hm.
  destruct (render_handle s m n Hm U) as [b [Hb [Eb [Gb [St Sh]]]]]. subst n.
  assert (F : sp_block s (b_id b) = Some b).
  { unfold sp_block. rewrite sp_blocks_eq. exact (find_block_unique s b I Hb). }
  assert (K : exists dd, In (KB (b_id b), VRaw dd) (store s)).
  { pose proof (C b Hb) as Cb. unfold covered in Cb.
    destruct St as [St|St]; rewrite St in Cb;
    (destruct Cb as [Cb|[g [es [dd [G _]]]]]; [exact Cb|congruence]). }
  destruct K as [dd Kd].
  destruct (S1 _ _ Kd) as [dd' [E D]]. injection E as <-.
  pose proof (in_data_unique s b dd I Hb D) as ->.
  destruct (in_lookup _ _ _ Kd) as [v L].
  pose proof (lookup_unique _ _ _ _ Nd Kd L) as <-.
  cbn [sp_key_of sp_level]. rewrite F. split; [exact Sh|]. split.
  - rewrite sp_lookup_eq, L. discriminate.
  - unfold sp_read_path, sp_unit_payload, sp_leaves. cbn [sp_read_f sp_leaves_f flat_map].
    rewrite sp_lookup_eq, L, F. reflexivity.
Qed.

(* ------------------------------------------------------------------ *)
(* Archiving one block records its level and ~Tok (Implementation Details,
   "Dashboard format": Level, ~Tok) *)

Lemma call_shown_eq s b : ids_ok s -> parent_in_prompt s b = sp_call_shown (turns s) (b_id b).
Proof.
  unfold ids_ok, parent_in_prompt. intro I.
  assert (N : NoDup (map b_id (flat_map turn_blocks (turns s)))).
  { change (flat_map turn_blocks (turns s)) with (blocks s). rewrite I. apply seq_NoDup. }
  clear I. induction (turns s) as [|[b0|c rs] r IH]; simpl in *; auto.
  - inversion N; auto.
  - rewrite map_app in N. inversion N as [|? ? N0 N1]; subst.
    pose proof (nodup_app_r _ _ N1) as Nr. rewrite <- (IH Nr).
    destruct (existsb (fun b1 => Nat.eqb (b_id b1) (b_id b)) rs) eqn:E.
    + assert (Nr' : ~ In (b_id b) (map b_id (flat_map turn_blocks r))).
      { apply existsb_id_in in E. intro H. exact (nodup_app_disj _ _ (b_id b) N1 E H). }
      destruct (not_in_parent r (b_id b) Nr') as [_ Z]. rewrite <- (IH Nr) in Z.
      rewrite Z. destruct (b_status c); reflexivity.
    + rewrite andb_false_r. reflexivity.
Qed.

Lemma find_map_id (p : block -> bool) (g : block -> block) l :
  (forall x, p (g x) = p x) -> find p (map g l) = option_map g (find p l).
Proof.
  intro G. induction l as [|x l IH]; simpl; auto. rewrite G. destruct (p x); auto.
Qed.

Theorem levels_run (c : config) (d : nat) (s0 : state) (ops : list op)
    (n : nat) (h : nat * nat) (stubs : list (nat * nat)) (dd : nat) (b : block) :
  init c d = Some s0 ->
  let s := run s0 ops in
  let o := OArchive [UB n] h stubs dd in
  r_ok (snd (step s o)) = None -> sp_block s n = Some b ->
  exists b', sp_block (fst (step s o)) n = Some b' /\ b_status b' = Archived /\
    b_level b' = (if sp_shown_in_prompt (b_status b) then 1 else S (b_level b)) /\
    b_tok b' = r_tok (sp_block_row s b).
Proof.
  intros Init. cbv zeta. set (s := run s0 ops).
  assert (I : ids_ok s).
  { apply run_invariant; [exact (proj1 (init_fresh c d s0 Init))|].
    intros t o' H. exact (proj1 (stable_step t o' H)). }
  cbn [step]. unfold act, resolve.
  destruct (first_error s AArchive [UB n]) as [e|] eqn:E; [cbn; intro X; discriminate X|].
  wf_split; [|cbn; intro X; discriminate X].
  intros _ Hb. cbn [fst sort_by dedup dedup_acc existsb fold_right insert_by].
  pose proof (first_error_none _ _ _ E (UB n) (or_introl eq_refl)) as Ck.
  assert (F : find_block s n = Some b) by (unfold find_block; rewrite <- sp_blocks_eq; exact Hb).
  destruct (find_block_in s n b F) as [Hin Eb].
  unfold check_unit in Ck. rewrite F in Ck.
  unfold archive_units. rewrite F.
  assert (Sb : forall f t, turns t = turns (update s f) -> (forall x, b_id (f x) = b_id x) ->
     sp_block t n = Some (if protected s b then b else f b)).
  { intros f t Tt Hf. unfold sp_block. rewrite sp_blocks_eq.
    replace (blocks t) with (blocks (update s f)) by (unfold blocks; rewrite Tt; reflexivity).
    rewrite blocks_update, find_map_id.
    - change (find (fun x => b_id x =? n) (blocks s)) with (find_block s n). rewrite F. reflexivity.
    - intro x. destruct (protected s x); [reflexivity|]. rewrite Hf. reflexivity. }
  destruct (b_status b) eqn:St; try discriminate;
  destruct (b_group b); try discriminate;
  destruct (protected s b) eqn:P; try discriminate;
  destruct (in_batch s b); try discriminate; cbn [in_prompt].
  - eexists. split.
    + eapply Sb; [reflexivity|]. intro x. cbv beta. destruct (b_id x =? n); reflexivity.
    + cbv beta. rewrite Eb, Nat.eqb_refl. cbn [set_block b_status b_level b_tok sp_block_row r_tok].
      try rewrite St. cbn [sp_shown_in_prompt]. split; [reflexivity|split; [reflexivity|]].
      unfold pos_cost. rewrite sp_costs_eq, sp_position_eq, call_shown_eq by exact I. reflexivity.
  - eexists. split.
    + eapply Sb; [reflexivity|]. intro x. cbv beta. destruct (b_id x =? n); reflexivity.
    + cbv beta. rewrite Eb, Nat.eqb_refl. cbn [set_block b_status b_level b_tok sp_block_row r_tok].
      try rewrite St. cbn [sp_shown_in_prompt]. auto.
  - eexists. split.
    + eapply Sb; [reflexivity|]. intro x. cbv beta. destruct (b_id x =? n); reflexivity.
    + cbv beta. rewrite Eb, Nat.eqb_refl. cbn [set_block b_status b_level b_tok sp_block_row r_tok].
      try rewrite St. cbn [sp_shown_in_prompt]. auto.
Qed.
