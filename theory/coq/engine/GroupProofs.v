(* The archive contract for group handles on the engine model: a group's
   payload in the store lists its members in order, each visible member
   inlined with its registered bytes, each archived member block referenced
   by its own key (raw bytes there), each member group referenced by its key;
   so following a group handle's key and the references nested in group
   payloads yields exactly the payload of the group's leaves (eq.
   archive-contract: read_path(h) == payload(S)).  And deletion of a group's
   leaves (Context Stream: delete "removes the selected content
   permanently"): every block inside a deleted group, nested groups included,
   is a tombstone recover refuses, and no store entry (its own key, or an
   entry inlined in any group payload, every group key being a live group's)
   holds its bytes.  Statements.v restates the theorems proved here
   ([archive_contract_run], [deletion_leaves_run]) in the paper's words. *)

From Coq Require Import List Arith Bool Lia PeanoNat Permutation.
Import ListNotations.
From VistaLabEngine Require Import Model Spec Claims Theorems SpecProofs DeletionProofs ArchiveProofs.

(* ------------------------------------------------------------------ *)
(* The invariant tying group records to their nested payloads *)

(* Member [u] of group [x] and the entry [e] of x's payload at its place. *)
Definition mem_ok (s : state) (x : group) (u : uid) (e : entry) : Prop :=
  match u with
  | UB m => exists b, In b (blocks s) /\ b_id b = m /\ b_group b = Some (g_id x) /\
      (e = EIn (UB m) (b_data b) \/ (e = ERef (UB m) (KB m) /\ In (KB m, VRaw (b_data b)) (store s)))
  | UG h => e = ERef (UG h) (KG h) /\
      exists y, In y (groups s) /\ g_id y = h /\ h < g_id x /\ g_parent y = Some (g_id x)
  end.

Definition grp_inv (s : state) : Prop :=
  NoDup (map g_id (groups s)) /\
  (forall x, In x (groups s) -> exists es, In (KG (g_id x), VGrp es) (store s) /\
                                   Forall2 (mem_ok s x) (g_members x) es) /\
  (forall y p, In y (groups s) -> g_parent y = Some p ->
     exists z, In z (groups s) /\ g_id z = p /\ g_id y < p) /\
  (forall b, In b (blocks s) -> b_group b <> None -> b_status b = Archived \/ b_status b = Offloaded).

(* What an operation keeps of group [x]'s members: its member blocks (with
   their own store entries) and its member groups (their IDs and parent). *)
Definition keeps_members (s s' : state) (x : group) : Prop :=
  (forall b, In b (blocks s) -> b_group b = Some (g_id x) ->
     In b (blocks s') /\ (forall v, In (KB (b_id b), v) (store s) -> In (KB (b_id b), v) (store s'))) /\
  (forall y, In y (groups s) -> g_parent y = Some (g_id x) ->
     exists y', In y' (groups s') /\ g_id y' = g_id y /\ g_parent y' = Some (g_id x)).

Lemma mem_transfer s s' x x' ms es :
  g_id x' = g_id x -> keeps_members s s' x ->
  Forall2 (mem_ok s x) ms es -> Forall2 (mem_ok s' x') ms es.
Proof.
  intros E [KB KG] F. induction F as [|u e ms es H F IH]; constructor; auto.
  destruct u as [m|h]; cbn [mem_ok] in *; rewrite E.
  - destruct H as [b [Hb [Eb [Gb D]]]]. destruct (KB b Hb Gb) as [Hb' Ks].
    exists b. split; [exact Hb'|]. split; [exact Eb|]. split; [exact Gb|].
    destruct D as [D|[D Hk]]; [left; exact D|right; split; [exact D|]].
    subst m. apply Ks. exact Hk.
  - destruct H as [Ee [y [Hy [Ey [L P]]]]]. split; [exact Ee|].
    destruct (KG y Hy P) as [y' [Hy' [Ey' Py']]]. exists y'. repeat split; congruence.
Qed.

Lemma nodup_gid_eq gs x y :
  NoDup (map g_id gs) -> In x gs -> In y gs -> g_id x = g_id y -> x = y.
Proof.
  induction gs as [|z gs IH]; simpl; [tauto|]. intros N Hx Hy E. inversion N as [|? ? N1 N2]; subst.
  destruct Hx as [<-|Hx]; destruct Hy as [<-|Hy]; auto.
  - exfalso. apply N1. rewrite E. apply in_map, Hy.
  - exfalso. apply N1. rewrite <- E. apply in_map, Hx.
Qed.

Lemma find_gid gs x :
  NoDup (map g_id gs) -> In x gs -> find (fun y => g_id y =? g_id x) gs = Some x.
Proof.
  intros N H. destruct (find (fun y => g_id y =? g_id x) gs) as [y|] eqn:F.
  - apply find_some in F. destruct F as [Hy E]. apply Nat.eqb_eq in E.
    f_equal. exact (nodup_gid_eq gs y x N Hy H E).
  - eapply find_none in F; [|exact H]. rewrite Nat.eqb_refl in F. discriminate.
Qed.

(* The same blocks, groups and store: the same invariant. *)
Lemma grp_same s s' :
  blocks s' = blocks s -> groups s' = groups s -> store s' = store s -> grp_inv s -> grp_inv s'.
Proof.
  intros B G St [N [P [Q R]]]. unfold grp_inv. rewrite B, G, St.
  split; [exact N|]. split; [|split; [exact Q|exact R]].
  intros x Hx. destruct (P x Hx) as [es [He F]]. exists es. split; [exact He|].
  revert F. apply mem_transfer; [reflexivity|]. unfold keeps_members. rewrite B, St, G.
  split; intros; eauto.
Qed.

(* A block appended outside every group. *)
Lemma grp_append s s' b :
  grp_inv s -> blocks s' = blocks s ++ [b] -> b_group b = None ->
  groups s' = groups s -> store s' = store s -> grp_inv s'.
Proof.
  intros [N [P [Q R]]] B Gb G St. unfold grp_inv. rewrite G, St.
  split; [exact N|]. split; [|split; [exact Q|]].
  - intros x Hx. destruct (P x Hx) as [es [He F]]. exists es. split; [exact He|].
    revert F. apply mem_transfer; [reflexivity|]. split.
    + intros b0 Hb0 _. split; [rewrite B; apply in_or_app; left; exact Hb0|]. rewrite St. auto.
    + intros y Hy E. exists y. rewrite G. auto.
  - intros b0 Hb0. rewrite B in Hb0. apply in_app_iff in Hb0.
    destruct Hb0 as [Hb0|[<-|[]]]; [exact (R b0 Hb0)|]. intro E. congruence.
Qed.

Lemma in_update_keep s f b : In b (blocks s) -> f b = b -> In b (blocks (update s f)).
Proof.
  rewrite blocks_update. intros H E. apply in_map_iff. exists b. split; [|exact H].
  destruct (protected s b); [reflexivity|exact E].
Qed.

(* A block update that leaves every grouped block alone, sends no block into
   a group, with a store that keeps every grouped block's key and every
   group's key. *)
Lemma grp_update s s' f :
  grp_inv s ->
  blocks s' = blocks (update s f) -> groups s' = groups s ->
  (forall b, In b (blocks s) -> b_group b <> None -> f b = b) ->
  (forall b, In b (blocks s) -> b_group b = None -> b_group (f b) = None) ->
  (forall k v, In (k, v) (store s) -> (exists g, k = KG g) \/
     (exists b, In b (blocks s) /\ k = KB (b_id b) /\ b_group b <> None) -> In (k, v) (store s')) ->
  grp_inv s'.
Proof.
  intros [N [P [Q R]]] B G Fk Fn K. unfold grp_inv. rewrite G.
  split; [exact N|]. split; [|split; [exact Q|]].
  - intros x Hx. destruct (P x Hx) as [es [He F]]. exists es.
    split; [apply K; [exact He|left; eauto]|].
    revert F. apply mem_transfer; [reflexivity|]. split.
    + intros b Hb Gb. assert (Nb : b_group b <> None) by congruence. split.
      * rewrite B. apply in_update_keep; [exact Hb|exact (Fk b Hb Nb)].
      * intros v Hv. apply K; [exact Hv|right; eauto].
    + intros y Hy E. exists y. rewrite G. auto.
  - intros b' Hb'. rewrite B in Hb'. destruct (blocks_update_in s f b' Hb') as [b [Hb [[_ ->]|[_ ->]]]].
    + exact (R b Hb).
    + destruct (b_group b) eqn:Gb.
      * rewrite (Fk b Hb ltac:(congruence)). exact (R b Hb).
      * rewrite (Fn b Hb Gb). intro E; exfalso; exact (E eq_refl).
Qed.

Lemma put_keep k v k' v' st : In (k, v) st -> k <> k' -> In (k, v) (put k' v' st).
Proof. intros H E. apply in_put. left. split; [exact H|exact E]. Qed.

Lemma remove_keep k v k' st : In (k, v) st -> k <> k' -> In (k, v) (remove_key k' st).
Proof. intros H E. apply in_remove_key. split; [exact H|exact E]. Qed.

(* Block [n] is in no group (what selecting it alone guarantees). *)
Definition nonmem (s : state) (n : nat) : Prop :=
  forall b, In b (blocks s) -> b_id b = n -> b_group b = None.

Lemma nonmem_update s f n :
  (forall b, b_id (f b) = b_id b) -> (forall b, b_group b = None -> b_group (f b) = None) ->
  nonmem s n -> nonmem (update s f) n.
Proof.
  intros Fi Fg M b' Hb' E. destruct (blocks_update_in s f b' Hb') as [b [Hb [[_ ->]|[_ ->]]]].
  - exact (M b Hb E).
  - rewrite Fi in E. exact (Fg b (M b Hb E)).
Qed.

Lemma grouped_ne s n b : nonmem s n -> In b (blocks s) -> b_group b <> None -> b_id b <> n.
Proof. intros M H G E. exact (G (M b H E)). Qed.

(* One block moved out of the prompt on its own, or back into it, or
   deleted: an update of block [n] only, outside every group, with its own
   key written or removed. *)
Lemma grp_single s s' n st (lf : block -> nat) (hf : block -> nat * nat) (tf : block -> nat) :
  grp_inv s -> nonmem s n ->
  blocks s' = blocks (update s (fun b => if b_id b =? n then set_block st None (lf b) (hf b) (tf b) b else b)) ->
  groups s' = groups s ->
  (forall k v, In (k, v) (store s) -> k <> KB n -> In (k, v) (store s')) ->
  grp_inv s'.
Proof.
  intros Gi M B G K. apply (grp_update s s' _ Gi B G).
  - intros b Hb Nb. rewrite (proj2 (Nat.eqb_neq _ _) (grouped_ne s n b M Hb Nb)). reflexivity.
  - intros b _ Gb. destruct (b_id b =? n); [reflexivity|exact Gb].
  - intros k v Hkv W. apply K; [exact Hkv|]. intro E. subst k.
    destruct W as [[g W]|[b [Hb [W Nb]]]]; [discriminate|].
    injection W as W. exact (grouped_ne s n b M Hb Nb (eq_sym W)).
Qed.

Lemma nonmem_single s n m st (lf : block -> nat) (hf : block -> nat * nat) (tf : block -> nat) :
  nonmem s m ->
  nonmem (update s (fun b => if b_id b =? n then set_block st None (lf b) (hf b) (tf b) b else b)) m.
Proof.
  apply nonmem_update; intro b; destruct (b_id b =? n); auto.
Qed.

(* The guard's offloads *)
Lemma grp_offload_block s x : grp_inv s -> nonmem s x -> grp_inv (offload_block s x).
Proof.
  intros Gi M. unfold offload_block; cbv zeta.
  destruct (find_block s x) as [bx|].
  - apply (grp_single s _ x Offloaded (fun _ => 1) b_h (pos_cost s) Gi M); [reflexivity|reflexivity|].
    intros k v H E. cbn [store with_store]. exact (put_keep _ _ _ _ _ H E).
  - apply (grp_single s _ x Offloaded (fun _ => 1) b_h (pos_cost s) Gi M); [reflexivity|reflexivity|].
    intros k v H E. exact H.
Qed.

Lemma nonmem_offload_block s x m : nonmem s m -> nonmem (offload_block s x) m.
Proof.
  intro M. unfold offload_block; cbv zeta.
  destruct (find_block s x); exact (nonmem_single s x m Offloaded (fun _ => 1) b_h (pos_cost s) M).
Qed.

Lemma grp_offload_all xs s :
  grp_inv s -> (forall x, In x xs -> nonmem s x) -> grp_inv (offload_all s xs).
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intros s Gi M; simpl; [exact Gi|].
  apply IH.
  - apply grp_offload_block; [exact Gi|apply M; left; reflexivity].
  - intros y Hy. apply nonmem_offload_block, M. right; exact Hy.
Qed.

(* Groups changed in place: level and handle only. *)
Lemma grp_map_groups s s' F :
  grp_inv s -> blocks s' = blocks s -> store s' = store s -> groups s' = map F (groups s) ->
  (forall x, g_id (F x) = g_id x /\ g_members (F x) = g_members x /\ g_parent (F x) = g_parent x) ->
  grp_inv s'.
Proof.
  intros [N [P [Q R]]] B St G Fx. unfold grp_inv. rewrite B, St, G.
  split; [rewrite map_map; replace (map (fun x => g_id (F x)) (groups s)) with (map g_id (groups s));
          [exact N|apply map_ext; intro; symmetry; apply Fx]|].
  split; [|split; [|exact R]].
  - intros x' Hx'. apply in_map_iff in Hx'. destruct Hx' as [x [<- Hx]].
    destruct (Fx x) as [I1 [I2 I3]]. destruct (P x Hx) as [es [He Fa]].
    exists es. rewrite I1, I2. split; [exact He|]. revert Fa. apply mem_transfer; [exact I1|].
    unfold keeps_members. rewrite B, St, G. split; [intros; split; auto|].
    intros y Hy E. exists (F y). destruct (Fx y) as [J1 [J2 J3]].
    split; [apply in_map; exact Hy|]. split; [exact J1|]. rewrite J3; exact E.
  - intros y' p Hy' E. apply in_map_iff in Hy'. destruct Hy' as [y [<- Hy]].
    destruct (Fx y) as [J1 [J2 J3]]. rewrite J3 in E. destruct (Q y p Hy E) as [z [Hz [Ez L]]].
    exists (F z). split; [apply in_map; exact Hz|]. destruct (Fx z) as [K1 _]. split; [congruence|]. lia.
Qed.

(* ------------------------------------------------------------------ *)
(* Restore and delete of one unit *)

(* Group [g] is top-level (or gone): what selecting it guarantees. *)
Definition top (s : state) (g : nat) : Prop :=
  forall y, In y (groups s) -> g_id y = g -> g_parent y = None.

Lemma nodup_map_filter {A B} (f : A -> B) (p : A -> bool) l :
  NoDup (map f l) -> NoDup (map f (filter p l)).
Proof.
  induction l as [|x l IH]; simpl; [auto|]. intro N. inversion N as [|? ? N1 N2]; subst.
  destruct (p x); simpl; [|auto]. constructor; [|auto].
  intro H. apply N1. apply in_map_iff in H. destruct H as [y [E Y]]. apply filter_In in Y.
  apply in_map_iff. exists y. tauto.
Qed.

Definition clr (g : nat) (x : group) : group :=
  match g_parent x with Some p => if p =? g then group_parent None x else x | None => x end.

Lemma clr_fields g x : g_id (clr g x) = g_id x /\ g_members (clr g x) = g_members x /\
  (g_parent (clr g x) = g_parent x \/ (g_parent x = Some g /\ g_parent (clr g x) = None)).
Proof.
  unfold clr. destruct (g_parent x) as [p|] eqn:P; [|auto].
  destruct (Nat.eqb_spec p g) as [->|E]; [|rewrite P; auto].
  cbn [group_parent g_id g_members g_parent]. auto.
Qed.

Lemma grp_restore_group s g : grp_inv s -> top s g -> grp_inv (restore_unit s (UG g)).
Proof.
  intros Gi T. pose proof Gi as [N [P [Q R]]]. unfold restore_unit; cbv zeta.
  match goal with |- grp_inv (with_store (with_groups (update s ?f) _) _) => set (F := f) end.
  assert (Fg : forall b, b_group b = None \/ (exists h, b_group b = Some h /\ h <> g) -> F b = b).
  { intros b [G|[h [G E]]]; unfold F; rewrite G; [reflexivity|].
    rewrite (proj2 (Nat.eqb_neq _ _) E). reflexivity. }
  set (gs := map (clr g) (filter (fun x => negb (g_id x =? g)) (groups s))).
  assert (Gs : forall x', In x' gs <-> exists x, In x (groups s) /\ g_id x <> g /\ x' = clr g x).
  { intro x'. unfold gs. rewrite in_map_iff. split.
    - intros [x [E H]]. apply filter_In in H. destruct H as [H Ex].
      apply negb_true_iff, Nat.eqb_neq in Ex. exists x. auto.
    - intros [x [H [Ex E]]]. exists x. split; [auto|]. apply filter_In. split; [exact H|].
      apply negb_true_iff, Nat.eqb_neq. exact Ex. }
  unfold grp_inv. cbn [groups store with_store with_groups].
  replace (map (fun x => match g_parent x with Some p => if p =? g then group_parent None x else x
                         | None => x end) (filter (fun x => negb (g_id x =? g)) (groups (update s F))))
    with gs by reflexivity.
  split; [|split; [|split]].
  - unfold gs. rewrite map_map. replace (map (fun x => g_id (clr g x)) _) with
      (map g_id (filter (fun x => negb (g_id x =? g)) (groups s)))
      by (apply map_ext; intro; symmetry; apply clr_fields).
    apply nodup_map_filter, N.
  - intros x' Hx'. apply Gs in Hx'. destruct Hx' as [x [Hx [Ex ->]]].
    destruct (clr_fields g x) as [I1 [I2 _]]. destruct (P x Hx) as [es [He Fa]].
    exists es. rewrite I1, I2. split; [apply remove_keep; [exact He|congruence]|].
    revert Fa. apply mem_transfer; [exact I1|]. split.
    + intros b Hb Gb. split.
      * apply in_update_keep; [exact Hb|]. apply Fg. right. exists (g_id x). auto.
      * intros v Hv. apply remove_keep; [exact Hv|discriminate].
    + intros y Hy Ey. exists y. split; [|split; [reflexivity|]].
      * apply Gs. exists y. split; [exact Hy|]. split.
        -- intro E. rewrite (T y Hy E) in Ey. discriminate.
        -- unfold clr. rewrite Ey. rewrite (proj2 (Nat.eqb_neq _ _) Ex). reflexivity.
      * exact Ey.
  - intros y' p Hy' E. apply Gs in Hy'. destruct Hy' as [y [Hy [Ey ->]]].
    destruct (clr_fields g y) as [I1 [_ [I3|[_ I3]]]]; [|congruence].
    rewrite I3 in E. destruct (Q y p Hy E) as [z [Hz [Ez L]]].
    assert (Pz : p <> g).
    { intro Ep. unfold clr in I3. rewrite E in I3. cbn in I3. rewrite Ep, Nat.eqb_refl in I3.
      cbn in I3. discriminate. }
    exists (clr g z). split; [apply Gs; exists z; split; [exact Hz|split; [congruence|reflexivity]]|].
    destruct (clr_fields g z) as [K1 _]. rewrite K1, I1. split; [exact Ez|exact L].
  - intros b' Hb'. destruct (blocks_update_in s F b' Hb') as [b [Hb [[_ ->]|[_ ->]]]]; [exact (R b Hb)|].
    unfold F. destruct (b_group b) as [h|] eqn:Gb; [|intro C; exfalso; exact (C Gb)].
    destruct (h =? g); [destruct (inlined _ _); intro C; exfalso; exact (C eq_refl)|].
    exact (R b Hb).
Qed.

(* Climbing to the top group: enough fuel gives the same top. *)
Definition urank (gs : list group) (x : group) : nat := length (filter (fun z => g_id x <? g_id z) gs).

Lemma filter_strict {A} (p q : A -> bool) l z :
  (forall a, p a = true -> q a = true) -> In z l -> q z = true -> p z = false ->
  length (filter p l) < length (filter q l).
Proof.
  intros Hpq. induction l as [|a l IH]; simpl; [tauto|]. intros [<-|H] Qz Pz.
  - rewrite Pz, Qz. simpl. apply Nat.lt_succ_r.
    clear IH. induction l as [|b l IH]; simpl; [lia|].
    destruct (p b) eqn:Pb; [rewrite (Hpq b Pb); simpl; lia|]. destruct (q b); simpl; lia.
  - specialize (IH H Qz Pz). destruct (p a) eqn:Pa; [rewrite (Hpq a Pa); simpl; lia|].
    destruct (q a); simpl; lia.
Qed.

Lemma filter_true_len {A} (l : list A) : length (filter (fun _ => true) l) = length l.
Proof. induction l; simpl; auto. Qed.

Lemma urank_lt gs x : In x gs -> urank gs x < length gs.
Proof.
  intro H. unfold urank. rewrite <- (filter_true_len gs).
  apply (filter_strict _ _ gs x); auto. apply Nat.ltb_irrefl.
Qed.

Definition parents_ok (gs : list group) : Prop :=
  forall y p, In y gs -> g_parent y = Some p -> exists z, In z gs /\ g_id z = p /\ g_id y < p.

Lemma climb_fuel gs : NoDup (map g_id gs) -> parents_ok gs ->
  forall f x f', In x gs -> urank gs x <= f -> f <= f' -> climb gs f' x = climb gs f x.
Proof.
  intros N Q. induction f as [|f IH]; intros x f' Hx U L.
  - destruct (g_parent x) as [p|] eqn:P; [|rewrite !climb_top by exact P; reflexivity].
    exfalso. destruct (Q x p Hx P) as [z [Hz [Ez Lz]]].
    assert (0 < urank gs x); [|lia]. unfold urank.
    destruct (filter _ gs) eqn:E; [|simpl; lia].
    assert (Iz : In z (filter (fun z => g_id x <? g_id z) gs)).
    { apply filter_In. split; [exact Hz|]. apply Nat.ltb_lt. lia. }
    rewrite E in Iz. destruct Iz.
  - destruct f' as [|f']; [lia|]. cbn [climb].
    destruct (g_parent x) as [p|] eqn:P; [|reflexivity].
    destruct (Q x p Hx P) as [z [Hz [Ez Lz]]]. subst p. rewrite (find_gid gs z N Hz).
    apply IH; [exact Hz| |lia].
    assert (urank gs z < urank gs x); [|lia]. unfold urank.
    apply (filter_strict _ _ gs z); [|exact Hz|apply Nat.ltb_lt; lia|apply Nat.ltb_irrefl].
    intros a A. apply Nat.ltb_lt in A. apply Nat.ltb_lt. lia.
Qed.

Lemma under_parent s g x y :
  NoDup (map g_id (groups s)) -> parents_ok (groups s) ->
  In x (groups s) -> In y (groups s) -> g_parent y = Some (g_id x) -> under s g y = under s g x.
Proof.
  intros N Q Hx Hy P. unfold under.
  assert (E : climb (groups s) (length (groups s)) y = climb (groups s) (length (groups s)) x).
  { pose proof (urank_lt _ _ Hx) as U.
    destruct (length (groups s)) as [|L] eqn:Len; [lia|].
    transitivity (climb (groups s) L x).
    - cbn [climb]. rewrite P, (find_gid _ x N Hx). reflexivity.
    - symmetry. apply (climb_fuel (groups s) N Q L x (S L) Hx); lia. }
  rewrite E. reflexivity.
Qed.

Lemma grp_delete_group s g : rec_inv s -> grp_inv s -> grp_inv (delete_unit s (UG g)).
Proof.
  intros Rc Gi. pose proof Gi as [N [P [Q R]]]. pose proof (proj1 Rc) as I.
  unfold delete_unit; cbv zeta.
  set (DOOM := fun h => existsb (fun x => (g_id x =? h) && under s g x) (groups s)).
  set (DEAD := fun b : block => match b_group b with Some h => DOOM h | None => false end).
  assert (Dx : forall x, In x (groups s) -> DOOM (g_id x) = under s g x).
  { intros x Hx. unfold DOOM. destruct (under s g x) eqn:U.
    - apply existsb_exists. exists x. rewrite Nat.eqb_refl, U. auto.
    - apply not_true_iff_false. intro E. apply existsb_exists in E. destruct E as [y [Hy E]].
      apply andb_true_iff in E. destruct E as [E1 E2]. apply Nat.eqb_eq in E1.
      rewrite (nodup_gid_eq _ y x N Hy Hx E1) in E2. congruence. }
  unfold grp_inv. cbn [groups store with_store with_groups].
  assert (Kp : forall y, In y (filter (fun x => negb (under s g x)) (groups s)) <->
                         In y (groups s) /\ under s g y = false).
  { intro y. rewrite filter_In. rewrite negb_true_iff. tauto. }
  split; [|split; [|split]].
  - apply nodup_map_filter, N.
  - intros x Hx. apply Kp in Hx. destruct Hx as [Hx Ux]. destruct (P x Hx) as [es [He Fa]].
    exists es. split.
    + apply filter_In. split; [exact He|]. cbn [fst]. change (negb (DOOM (g_id x)) = true).
      rewrite Dx, Ux by exact Hx. reflexivity.
    + revert Fa. apply mem_transfer; [reflexivity|]. split.
      * intros b Hb Gb. assert (Db : DEAD b = false) by (unfold DEAD; rewrite Gb, Dx, Ux by exact Hx; reflexivity).
        split.
        -- apply in_update_keep; [exact Hb|]. cbv beta.
           match goal with |- context [if ?c then _ else _] => replace c with false by (symmetry; exact Db) end.
           reflexivity.
        -- intros v Hv. apply filter_In. split; [exact Hv|]. cbn [fst].
           rewrite (find_block_unique s b I Hb). change (negb (DEAD b) = true). rewrite Db. reflexivity.
      * intros y Hy Ey. exists y. split; [|auto]. apply Kp. split; [exact Hy|].
        rewrite (under_parent s g x y N Q Hx Hy Ey). exact Ux.
  - intros y p Hy E. apply Kp in Hy. destruct Hy as [Hy Uy].
    destruct (Q y p Hy E) as [z [Hz [Ez L]]]. exists z. split; [|auto]. apply Kp. split; [exact Hz|].
    subst p. rewrite <- (under_parent s g z y N Q Hz Hy E). exact Uy.
  - intros b' Hb'. destruct (blocks_update_in s _ b' Hb') as [b [Hb [[_ ->]|[_ ->]]]]; [exact (R b Hb)|].
    match goal with |- context [if ?c then _ else _] => destruct c end; [|exact (R b Hb)].
    intro C; exfalso; exact (C eq_refl).
Qed.

(* ------------------------------------------------------------------ *)
(* Archive *)

(* What selecting the units to archive guarantees. *)
Definition sel_ok (s : state) (us : list uid) : Prop :=
  (forall n, In (UB n) us -> exists b, find_block s n = Some b /\ b_group b = None /\
     b_status b <> Deleted /\ b_status b <> Pinned /\ protected s b = false) /\
  (forall g, In (UG g) us -> exists x, find_group s g = Some x /\ g_parent x = None).

Lemma checked_sel s a us : (forall u, In u us -> check_unit s a u = None) -> sel_ok s us.
Proof.
  intro C. split.
  - intros n H. specialize (C _ H). unfold check_unit in C.
    destruct (find_block s n) as [b|]; [|discriminate]. exists b. split; [reflexivity|].
    destruct (b_status b) eqn:St; try (destruct a; discriminate);
    destruct (b_group b); try discriminate; destruct (protected s b); try (destruct a; discriminate);
    repeat split; congruence.
  - intros g H. specialize (C _ H). unfold check_unit in C.
    destruct (find_group s g) as [x|]; [|discriminate]. exists x. split; [reflexivity|].
    destruct (g_parent x); [discriminate|reflexivity].
Qed.

Definition entry_of (s : state) (u : uid) : entry :=
  match u with
  | UB n => match find_block s n with
            | Some b => if in_prompt (b_status b) then EIn u (b_data b) else ERef u (KB n)
            | None => ERef u (KB n)
            end
  | UG g => ERef u (KG g)
  end.

Lemma forall2_map {A B} (P : A -> B -> Prop) (f : A -> B) l :
  (forall a, In a l -> P a (f a)) -> Forall2 P l (map f l).
Proof. induction l as [|a l IH]; simpl; intro H; constructor; auto. Qed.

Lemma nodup_snoc {A} (l : list A) a : NoDup l -> ~ In a l -> NoDup (l ++ [a]).
Proof.
  intros N H. apply (Permutation_NoDup (Permutation_cons_append l a)). constructor; auto.
Qed.

Lemma grp_new_group s us h stubs :
  rec_inv s -> gids_ok s -> grp_inv s -> sel_ok s us -> grp_inv (new_group s us h stubs).
Proof.
  intros Rc Gd Gi [SB SG]. pose proof Gi as [N [P [Q R]]]. pose proof Rc as [I [[S1 S2] [U [_ C]]]].
  unfold new_group; cbv zeta.
  match goal with |- grp_inv (with_counts (with_store (with_groups (update s ?f) (?gs ++ [?g]))
                                (put (KG ?gid) (VGrp ?es) (store s))) _ _) =>
    set (F := f); set (GS := gs); set (G := g); set (ES := es) end.
  assert (ESe : ES = map (entry_of s) us).
  { unfold ES. rewrite map_map. apply map_ext. intros [n|g]; cbn [entry_of].
    - destruct (find_block s n) as [b|]; [destruct (in_prompt (b_status b))|]; reflexivity.
    - destruct (find_group s g); reflexivity. }
  assert (Gid : g_id G = S (ngroups s)) by reflexivity.
  assert (Low : forall x, In x (groups s) -> g_id x < S (ngroups s)) by (intros x Hx; specialize (Gd x Hx); lia).
  (* grouped blocks and member groups are not selected *)
  assert (NotB : forall b, In b (blocks s) -> b_group b <> None -> existsb (uid_eqb (UB (b_id b))) us = false).
  { intros b Hb Nb. apply not_true_iff_false. intro E. apply existsb_uid in E.
    destruct (SB _ E) as [b0 [F0 [G0 _]]]. rewrite (find_block_unique s b I Hb) in F0.
    injection F0 as <-. exact (Nb G0). }
  assert (NotG : forall y, In y (groups s) -> g_parent y <> None -> existsb (uid_eqb (UG (g_id y))) us = false).
  { intros y Hy Ny. apply not_true_iff_false. intro E. apply existsb_exists in E.
    destruct E as [u [Hu E]]. apply uid_eqb_eq in E. subst u.
    destruct (SG _ Hu) as [y0 [F0 P0]]. unfold find_group in F0. rewrite (find_gid _ y N Hy) in F0.
    injection F0 as <-. exact (Ny P0). }
  assert (Fk : forall b, In b (blocks s) -> b_group b <> None -> F b = b).
  { intros b Hb Nb. unfold F. rewrite (NotB b Hb Nb). reflexivity. }
  set (mp := fun x : group => if existsb (uid_eqb (UG (g_id x))) us then group_parent (Some (S (ngroups s))) x else x).
  assert (GSe : GS = map mp (groups s)) by reflexivity.
  assert (Mp : forall x, g_id (mp x) = g_id x /\ g_members (mp x) = g_members x /\
             (g_parent (mp x) = g_parent x \/ g_parent (mp x) = Some (S (ngroups s)))).
  { intro x. unfold mp. destruct (existsb _ us); cbn [group_parent g_id g_members g_parent]; auto. }
  unfold grp_inv. cbn [groups store with_store with_groups with_counts].
  fold (blocks (update s F)). change (groups (update s F)) with (groups s).
  split; [|split; [|split]].
  - rewrite map_app, map_map. replace (map (fun x => g_id (mp x)) (groups s)) with (map g_id (groups s))
      by (apply map_ext; intro; symmetry; apply Mp).
    apply nodup_snoc; [exact N|]. rewrite Gid. intro H. apply in_map_iff in H.
    destruct H as [x [E Hx]]. specialize (Low x Hx). lia.
  - intros x' Hx'. apply in_app_iff in Hx'. destruct Hx' as [Hx'|[<-|[]]].
    + apply in_map_iff in Hx'. destruct Hx' as [x [<- Hx]]. destruct (Mp x) as [I1 [I2 _]].
      destruct (P x Hx) as [es [He Fa]]. exists es. rewrite I1, I2.
      split; [apply put_keep; [exact He|]; intro E; injection E; specialize (Low x Hx); lia|].
      revert Fa. apply mem_transfer; [exact I1|]. split.
      * intros b Hb Gb. split; [apply in_update_keep; [exact Hb|apply Fk; [exact Hb|congruence]]|].
        intros v Hv. apply put_keep; [exact Hv|discriminate].
      * intros y Hy Ey. exists y. split; [|auto]. apply in_app_iff. left.
        replace y with (mp y) at 1; [apply in_map; exact Hy|].
        unfold mp. rewrite (NotG y Hy ltac:(congruence)). reflexivity.
    + exists ES. split; [apply in_put; right; reflexivity|]. rewrite ESe.
      cbn [g_members G]. apply forall2_map. intros [n|g] Hu; cbn [mem_ok entry_of].
      * destruct (SB n Hu) as [b [Fb [Gb [Db [Pb Prb]]]]]. rewrite Fb.
        destruct (find_block_in s n b Fb) as [Hb Eb].
        assert (Dir : existsb (uid_eqb (UB (b_id b))) us = true).
        { apply existsb_exists. exists (UB n). split; [exact Hu|]. rewrite Eb. cbn. apply Nat.eqb_refl. }
        exists (F b). assert (Hfb : In (F b) (blocks (update s F))).
        { rewrite blocks_update. apply in_map_iff. exists b. rewrite Prb. auto. }
        unfold F. rewrite Dir. destruct (in_prompt (b_status b)) eqn:IP; cbn [b_id b_group b_data set_block].
        -- split; [unfold F in Hfb; rewrite Dir, IP in Hfb; exact Hfb|]. split; [exact Eb|].
           split; [reflexivity|]. left. reflexivity.
        -- split; [unfold F in Hfb; rewrite Dir, IP in Hfb; exact Hfb|]. split; [exact Eb|].
           split; [reflexivity|]. right. split; [reflexivity|].
           destruct (cov_grouped_out _ _ (C b Hb) Gb IP Db) as [d Hd].
           destruct (S1 _ _ Hd) as [d' [E Dd]]. injection E as <-.
           rewrite <- (in_data_unique s b d I Hb Dd). apply put_keep; [rewrite <- Eb; exact Hd|discriminate].
      * split; [reflexivity|]. destruct (SG g Hu) as [x [Fx Px]].
        apply find_some in Fx. destruct Fx as [Hx Ex]. apply Nat.eqb_eq in Ex.
        exists (mp x). destruct (Mp x) as [I1 _]. split; [apply in_app_iff; left; apply in_map; exact Hx|].
        split; [congruence|]. split; [rewrite Gid, <- Ex; exact (Low x Hx)|].
        unfold mp. replace (existsb (uid_eqb (UG (g_id x))) us) with true.
        -- reflexivity.
        -- symmetry. apply existsb_exists. exists (UG g). split; [exact Hu|]. rewrite Ex. cbn. apply Nat.eqb_refl.
  - intros y' p Hy' E. apply in_app_iff in Hy'. destruct Hy' as [Hy'|[<-|[]]]; [|discriminate].
    apply in_map_iff in Hy'. destruct Hy' as [y [<- Hy]]. destruct (Mp y) as [I1 [_ [I3|I3]]].
    + rewrite I3 in E. destruct (Q y p Hy E) as [z [Hz [Ez L]]]. exists (mp z).
      destruct (Mp z) as [K1 _]. split; [apply in_app_iff; left; apply in_map; exact Hz|].
      rewrite K1, I1. auto.
    + rewrite I3 in E. injection E as <-. exists G. split; [apply in_app_iff; right; left; reflexivity|].
      rewrite I1, Gid. split; [reflexivity|exact (Low y Hy)].
  - intros b' Hb'. destruct (blocks_update_in s F b' Hb') as [b [Hb [[_ ->]|[Pb ->]]]]; [exact (R b Hb)|].
    unfold F. destruct (existsb (uid_eqb (UB (b_id b))) us) eqn:D; [|exact (R b Hb)].
    apply existsb_uid in D. destruct (SB _ D) as [b0 [F0 [G0 [D0 [P0 _]]]]].
    rewrite (find_block_unique s b I Hb) in F0. injection F0 as <-.
    destruct (in_prompt (b_status b)) eqn:IP; cbn [b_status set_block]; intros _; [left; reflexivity|].
    destruct (b_status b); try discriminate; try contradiction; auto.
Qed.

Lemma nonmem_of s n b : ids_ok s -> find_block s n = Some b -> b_group b = None -> nonmem s n.
Proof.
  intros I F G b' Hb' E. pose proof (find_block_unique s b' I Hb') as F'. rewrite E, F in F'.
  injection F' as <-. exact G.
Qed.

Lemma grp_archive s us h stubs :
  rec_inv s -> gids_ok s -> grp_inv s -> sel_ok s us -> grp_inv (archive_units s us h stubs).
Proof.
  intros Rc Gd Gi Sl. pose proof (proj1 Rc) as I. unfold archive_units.
  destruct us as [|[n|g] [|u r]] eqn:Eus; try (apply grp_new_group; auto; fail).
  - destruct (find_block s n) as [b|] eqn:Fb; [|exact Gi].
    destruct (proj1 Sl n (or_introl eq_refl)) as [b0 [F0 [G0 _]]]. rewrite Fb in F0. injection F0 as <-.
    pose proof (nonmem_of s n b I Fb G0) as M.
    destruct (in_prompt (b_status b)); cbv zeta.
    + apply (grp_single s _ n Archived (fun _ => 1) (fun _ => h) (pos_cost s) Gi M); [reflexivity|reflexivity|].
      intros k v H E. exact (put_keep _ _ _ _ _ H E).
    + apply (grp_single s _ n Archived (fun x => S (b_level x)) (fun _ => h) b_tok Gi M);
        [reflexivity|reflexivity|]. intros k v H E. exact H.
  - destruct (find_group s g) as [x|]; [|exact Gi].
    apply (grp_map_groups s _ (fun y => if g_id y =? g then group_level_h (S (g_level x)) h y else y) Gi);
      [reflexivity|reflexivity|reflexivity|].
    intro y. destruct (g_id y =? g); cbn [group_level_h g_id g_members g_parent]; auto.
Qed.

(* ------------------------------------------------------------------ *)
(* Restore and delete: each unit in turn *)

Definition unit_sel (s : state) (u : uid) : Prop :=
  match u with UB n => nonmem s n | UG g => top s g end.

Lemma top_same s s' g : groups s' = groups s -> top s g -> top s' g.
Proof. intros G T y Hy E. rewrite G in Hy. exact (T y Hy E). Qed.

Lemma sel_restore_unit s u v : unit_sel s v -> unit_sel (restore_unit s u) v.
Proof.
  destruct u as [m|g]; unfold restore_unit; cbv zeta; destruct v as [n|h]; cbn [unit_sel].
  - apply nonmem_single.
  - apply top_same; reflexivity.
  - apply nonmem_update; intro b; [destruct (b_group b) as [g'|]; [destruct (g' =? g); [destruct (inlined _ _)|]|]; reflexivity|].
    intro Gb. rewrite Gb. exact Gb.
  - intros T y' Hy' E. cbn [groups with_store with_groups] in Hy'. apply in_map_iff in Hy'.
    destruct Hy' as [y [<- Hy]]. apply filter_In in Hy. destruct Hy as [Hy _].
    fold (clr g y) in E |- *. destruct (clr_fields g y) as [I1 [_ [I3|[I3 I4]]]].
    + rewrite I3. apply T; [exact Hy|congruence].
    + exact I4.
Qed.

Lemma sel_delete_unit s u v : unit_sel s v -> unit_sel (delete_unit s u) v.
Proof.
  destruct u as [m|g]; unfold delete_unit; cbv zeta; destruct v as [n|h]; cbn [unit_sel].
  - apply nonmem_single.
  - apply top_same; reflexivity.
  - apply nonmem_update; intro b; [match goal with |- context [if ?c then _ else _] => destruct c end; reflexivity|].
    intro Gb. match goal with |- context [if ?c then _ else _] => destruct c end; [reflexivity|exact Gb].
  - intros T y Hy E. cbn [groups with_store with_groups] in Hy. apply filter_In in Hy.
    exact (T y (proj1 Hy) E).
Qed.

Lemma grp_restore_unit s u : grp_inv s -> unit_sel s u -> grp_inv (restore_unit s u).
Proof.
  destruct u as [n|g]; cbn [unit_sel]; intros Gi M.
  - unfold restore_unit; cbv zeta.
    apply (grp_single s _ n Visible (fun _ => 0) (fun _ => (0, 0)) b_tok Gi M); [reflexivity|reflexivity|].
    intros k v H E. exact (remove_keep _ _ _ _ H E).
  - exact (grp_restore_group s g Gi M).
Qed.

Lemma grp_delete_unit s u : rec_inv s -> grp_inv s -> unit_sel s u -> grp_inv (delete_unit s u).
Proof.
  destruct u as [n|g]; cbn [unit_sel]; intros Rc Gi M.
  - unfold delete_unit; cbv zeta.
    apply (grp_single s _ n Deleted (fun _ => 0) (fun _ => (0, 0)) (fun _ => 0) Gi M); [reflexivity|reflexivity|].
    intros k v H E. exact (remove_keep _ _ _ _ H E).
  - exact (grp_delete_group s g Rc Gi).
Qed.

Lemma grp_restore l s :
  rec_inv s -> grp_inv s -> (forall u, In u l -> unit_sel s u) -> grp_inv (fold_left restore_unit l s).
Proof.
  revert s. induction l as [|u l IH]; intros s Rc Gi M; simpl; [exact Gi|].
  apply IH.
  - apply rec_restore_unit, Rc.
  - apply grp_restore_unit; [exact Gi|apply M; left; reflexivity].
  - intros v Hv. apply sel_restore_unit, M. right; exact Hv.
Qed.

Lemma grp_delete l s :
  rec_inv s -> grp_inv s -> (forall u, In u l -> unit_sel s u) -> grp_inv (fold_left delete_unit l s).
Proof.
  revert s. induction l as [|u l IH]; intros s Rc Gi M; simpl; [exact Gi|].
  apply IH.
  - apply rec_delete_unit, Rc.
  - apply grp_delete_unit; [exact Rc|exact Gi|apply M; left; reflexivity].
  - intros v Hv. apply sel_delete_unit, M. right; exact Hv.
Qed.

Lemma sel_units s a l : ids_ok s -> grp_inv s -> resolve s a [] = inr REmpty ->
  (forall u, In u l -> check_unit s a u = None) -> a <> AArchive -> forall u, In u l -> unit_sel s u.
Proof.
  intros I Gi _ C _ u Hu. pose proof (checked_sel s a l C) as [SB SG].
  destruct u as [n|g]; cbn [unit_sel].
  - destruct (SB n Hu) as [b [Fb [Gb _]]]. exact (nonmem_of s n b I Fb Gb).
  - destruct (SG g Hu) as [x [Fx Px]]. intros y Hy E. apply find_some in Fx. destruct Fx as [Hx Ex].
    apply Nat.eqb_eq in Ex. rewrite (nodup_gid_eq _ y x (proj1 Gi) Hy Hx ltac:(congruence)). exact Px.
Qed.

(* ------------------------------------------------------------------ *)
(* Every operation keeps the invariant *)

Lemma grp_step s o : rec_inv s -> gids_ok s -> grp_inv s -> grp_inv (fst (step s o)).
Proof.
  intros Rc Gd Gi. pose proof (proj1 Rc) as I. destruct o; cbn [step].
  - destruct k; try exact Gi; unfold reg_plain; destruct (pending s); try exact Gi;
    destruct (_ && _); cbn [fst]; try exact Gi;
    (match goal with |- grp_inv (with_dash (with_counts (with_turns s (turns s ++ [TP ?b])) _ _) _) =>
       apply (grp_append s _ b Gi); [|reflexivity..] end;
     autorewrite with st; apply blocks_snoc).
  - unfold reg_call. destruct (pending s); [|exact Gi]. destruct ids; [exact Gi|].
    destruct (negb _); cbn [fst]; [exact Gi|].
    destruct (keep_pending (cfg s) && _); cbn [fst]; [exact Gi|].
    match goal with |- grp_inv (with_dash (with_counts (with_pending (with_turns s (turns s ++ [TC ?b []])) _ _) _ _) _) =>
      apply (grp_append s _ b Gi); [|reflexivity..] end.
    autorewrite with st. apply blocks_snoc.
  - unfold reg_result. destruct (negb _) eqn:Ng; [exact Gi|].
    destruct (decide _ _ _ _) as [g off] eqn:Dc. cbn [fst]. wf_split; [|exact Gi].
    apply Bool.negb_false_iff, andb_true_iff in Ng. destruct Ng as [_ Ng].
    assert (Off : forall x, In x off -> nonmem s x).
    { intros x Hx.
      match type of Dc with decide ?a ?b ?c ?d = _ =>
        pose proof (decide_visible a b c d x) as V end.
      rewrite Dc in V. destruct (V Hx) as [b [Hb [Eb Vb]]].
      unfold blocks in Hb. cbn [turns with_counts with_pending with_turns] in Hb.
      rewrite blocks_add_result in Hb by exact Ng.
      apply in_app_iff in Hb. destruct Hb as [Hb|[<-|[]]].
      - intros b' Hb' E'. pose proof (find_block_unique s b' I Hb') as F'.
        rewrite E', <- Eb, (find_block_unique s b I Hb) in F'. injection F' as E2. subst b'.
        destruct (b_group b) eqn:Gb; [|reflexivity].
        destruct (proj2 (proj2 (proj2 Gi)) b Hb ltac:(congruence)) as [A|A]; congruence.
      - intros b' Hb' E'. pose proof (ids_range s b' I Hb'). cbn in Eb. lia. }
    pose proof (grp_offload_all off s Gi Off) as G2.
    destruct (groups_offload_all off s) as [Gs _].
    match goal with |- context [with_turns ?s2 (add_result (turns ?s2) ?r)] =>
      apply (grp_append s2 _ r G2); [|rej; reflexivity
                                     |reflexivity|reflexivity] end.
    autorewrite with st. unfold blocks at 1, with_turns; cbn [turns].
    apply blocks_add_result. apply last_is_call_offload_all. exact Ng.
  - unfold act. destruct (resolve s AArchive us) as [l|e] eqn:Rs; [|exact Gi]. cbn [fst].
    wf_split; [|exact Gi].
    apply grp_archive; auto. apply (checked_sel s AArchive). exact (resolve_checked _ _ _ _ Rs).
  - unfold act. destruct (resolve s ARestore us) as [l|e] eqn:Rs; [|exact Gi]. cbn [fst].
    wf_split; [|exact Gi].
    apply grp_restore; auto. apply (sel_units s ARestore l I Gi eq_refl); [|discriminate].
    exact (resolve_checked _ _ _ _ Rs).
  - unfold act. destruct (resolve s ADelete us) as [l|e] eqn:Rs; [|exact Gi]. cbn [fst].
    wf_split; [|exact Gi].
    apply grp_delete; auto. apply (sel_units s ADelete l I Gi eq_refl); [|discriminate].
    exact (resolve_checked _ _ _ _ Rs).
  - destruct (find_block s n); [destruct (recover s n)|]; exact Gi.
  - exact Gi.
Qed.

Lemma grp_init c d s : init c d = Some s -> grp_inv s.
Proof.
  unfold init. destruct (_ <=? _); intro H; inversion H; subst.
  repeat split; simpl; try (intros; contradiction); constructor.
Qed.

Definition all_inv (s : state) : Prop := rec_inv s /\ gids_ok s /\ grp_inv s.

Lemma all_run c d s0 ops : init c d = Some s0 -> all_inv (run s0 ops).
Proof.
  intro Init. apply run_invariant.
  - split; [exact (rec_init c d s0 Init)|split; [exact (proj2 (init_fresh c d s0 Init))|exact (grp_init c d s0 Init)]].
  - intros s o [A [B C]]. split; [exact (rec_step s o A)|split; [exact (gids_step s o B)|exact (grp_step s o A B C)]].
Qed.

(* ------------------------------------------------------------------ *)
(* What a handle shows *)

Definition ghandle_facts (s : state) (m : msg) (g : nat) (b : block) : Prop :=
  exists g0 x, b_group b = Some g0 /\ sp_top_of s g0 = Some x /\ g_id x = g /\
    m_show m = SHandle (KG g) (g_level x) (sp_payload s (KG g)).

Lemma pos_ghandle s incall b m g :
  In m (sp_position s incall b) -> sp_handle_unit (m_form m) (m_pos m) = Some (UG g) ->
  ghandle_facts s m g b.
Proof.
  unfold sp_position. cbv zeta. intros H U.
  destruct (b_status b) eqn:St.
  - destruct H as [<-|[]]. cbn in U. destruct (sp_is_result b && b_rej b); discriminate.
  - destruct H as [<-|[]]. cbn in U. destruct (sp_is_result b && b_rej b); discriminate.
  - destruct (b_group b) as [g0|] eqn:Gb.
    + destruct (sp_top_of s g0) as [x|] eqn:T.
      * destruct (Nat.eqb (sp_first x) (b_id b)).
        -- destruct H as [<-|[]]. cbn in U. injection U as <-. exists g0, x. auto.
        -- destruct (sp_is_result b && incall); [destruct H as [<-|[]]|destruct H]. discriminate.
      * destruct (sp_is_result b && incall); [destruct H as [<-|[]]|destruct H]. discriminate.
    + destruct H as [<-|[]]. discriminate.
  - destruct (b_group b) as [g0|] eqn:Gb.
    + destruct (sp_top_of s g0) as [x|] eqn:T.
      * destruct (Nat.eqb (sp_first x) (b_id b)).
        -- destruct H as [<-|[]]. cbn in U. injection U as <-. exists g0, x. auto.
        -- destruct (sp_is_result b && incall); [destruct H as [<-|[]]|destruct H]. discriminate.
      * destruct (sp_is_result b && incall); [destruct H as [<-|[]]|destruct H]. discriminate.
    + destruct H as [<-|[]]. discriminate.
  - destruct (sp_is_result b && incall); [destruct H as [<-|[]]|destruct H]. discriminate.
Qed.

Definition unit_facts (s : state) (m : msg) (u : uid) (b : block) : Prop :=
  match u with UB n => handle_facts s m n b | UG g => ghandle_facts s m g b end.

Lemma pos_unit s incall b m u :
  In m (sp_position s incall b) -> sp_handle_unit (m_form m) (m_pos m) = Some u -> unit_facts s m u b.
Proof. destruct u; [apply pos_handle|apply pos_ghandle]. Qed.

Lemma in_turn_unit s t m u :
  In m (sp_turn s t) -> sp_handle_unit (m_form m) (m_pos m) = Some u ->
  exists b, In b (sp_blocks_of t) /\ unit_facts s m u b.
Proof.
  destruct t as [b|c rs]; cbn [sp_turn sp_blocks_of]; intros H U.
  - exists b. split; [left; reflexivity|]. exact (pos_unit _ _ _ _ _ H U).
  - apply in_app_iff in H. destruct H as [H|H].
    + exists c. split; [left; reflexivity|]. exact (pos_unit _ _ _ _ _ H U).
    + apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
      destruct Hl as [r [<- Hr]]. exists r. split; [right; exact Hr|].
      exact (pos_unit _ _ _ _ _ H U).
Qed.

Lemma positions_unit s p m u :
  In p (sp_positions s) -> In m (snd p) -> sp_handle_unit (m_form m) (m_pos m) = Some u ->
  exists b, In b (blocks s) /\ unit_facts s m u b.
Proof.
  intros Hp H U. destruct (in_positions s p Hp) as [B [incall E]].
  exists (fst p). split; [rewrite <- sp_blocks_eq; exact B|].
  rewrite E in H. exact (pos_unit _ _ _ _ _ H U).
Qed.

Lemma render_unit s m u :
  In m (sp_render s) -> sp_handle_unit (m_form m) (m_pos m) = Some u ->
  exists b, In b (blocks s) /\ unit_facts s m u b.
Proof.
  unfold sp_render. rewrite <- sp_blocks_eq. destruct (_ <=? _); intros H U.
  - unfold sp_candidate in H. apply in_app_iff in H. destruct H as [H|H].
    + apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
      destruct Hl as [t [<- Ht]]. destruct (in_turn_unit s t m u H U) as [b [Hb F]].
      exists b. split; [|exact F]. unfold sp_blocks. apply in_concat. exists (sp_blocks_of t).
      split; [apply in_map; exact Ht|exact Hb].
    + apply in_app_iff in H. destruct H as [H|[<-|[]]]; [|discriminate].
      unfold sp_pending in H. apply in_map_iff in H. destruct H as [p [<- _]]. discriminate.
  - unfold sp_management in H. apply in_app_iff in H. destruct H as [H|H].
    2: { apply in_app_iff in H. destruct H as [H|[<-|[]]]; [|discriminate].
         unfold sp_kept in H. destruct (sp_keeps s); [|destruct H].
         apply in_app_iff in H. destruct H as [H|H].
         - destruct (rev (turns s)) as [|t r] eqn:Er; [destruct H|].
           destruct (in_turn_unit s t m u H U) as [b [Hb F]].
           exists b. split; [|exact F]. unfold sp_blocks. apply in_concat. exists (sp_blocks_of t).
           split; [apply in_map; apply in_rev; rewrite Er; left; reflexivity|exact Hb].
         - unfold sp_pending in H. apply in_map_iff in H. destruct H as [p [<- _]]. discriminate. }
    destruct (cache_prefix (cfg s)).
    { (* cache_prefix: the leading run of positions, then the pinned ones after the cut *)
      cbv zeta in H. apply in_app_iff in H. destruct H as [H|H].
      - apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
        destruct Hl as [p [<- Hp]]. apply in_firstn_sub in Hp.
        rewrite sp_blocks_eq. exact (positions_unit s p m u Hp H U).
      - apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
        destruct Hl as [p [<- Hp]]. apply in_skipn_sub in Hp.
        destruct (sp_plain_pin (fst p)); [|destruct H].
        rewrite sp_blocks_eq. exact (positions_unit s p m u Hp H U). }
    unfold sp_pinned in H. apply in_concat in H. destruct H as [l [Hl H]]. apply in_map_iff in Hl.
    destruct Hl as [b [<- Hb]]. exists b. split; [exact Hb|].
    destruct (b_status b); try contradiction. exact (pos_unit _ _ _ _ _ H U).
Qed.
(* ------------------------------------------------------------------ *)
(* Following a group's key and its nested references *)

Lemma sp_leaves_block f s m : sp_leaves_f f s (UB m) = [m].
Proof. destruct f; reflexivity. Qed.

Definition pay (s : state) (n : nat) : list (nat * nat) :=
  match sp_block s n with Some b => [(n, b_data b)] | None => [] end.

Definition drank (gs : list group) (x : group) : nat := length (filter (fun z => g_id z <? g_id x) gs).

Lemma sp_block_of s b : ids_ok s -> In b (blocks s) -> sp_block s (b_id b) = Some b.
Proof. intros I H. unfold sp_block. rewrite sp_blocks_eq. exact (find_block_unique s b I H). Qed.

Lemma lookup_of st k v : NoDup (map fst st) -> In (k, v) st -> sp_lookup k st = Some v.
Proof.
  intros N H. rewrite sp_lookup_eq. destruct (in_lookup _ _ _ H) as [v' L]. rewrite L.
  f_equal. symmetry. exact (lookup_unique _ _ _ _ N H L).
Qed.

Definition rstep (f : nat) (st : list (key * value)) (e : entry) (acc : option (list (nat * nat)))
    : option (list (nat * nat)) :=
  match acc, e with
  | Some l, EIn (UB m) d => Some ((m, d) :: l)
  | Some l, ERef _ k' => match sp_read_f f st k' with
                         | Some l' => Some (l' ++ l)
                         | None => None
                         end
  | _, _ => None
  end.

Lemma read_kg f st g : sp_read_f (S f) st (KG g) =
  match sp_lookup (KG g) st with Some (VGrp es) => fold_right (rstep f st) (Some []) es | _ => None end.
Proof. cbn [sp_read_f]. destruct (sp_lookup (KG g) st) as [[d|es]|]; reflexivity. Qed.

Lemma read_kb f st n : sp_read_f (S f) st (KB n) =
  match sp_lookup (KB n) st with Some (VRaw d) => Some [(n, d)] | _ => None end.
Proof. cbn [sp_read_f]. destruct (sp_lookup (KB n) st) as [[d|es]|]; reflexivity. Qed.

Lemma read_group s : rec_inv s -> grp_inv s ->
  forall f1 f2 x, In x (groups s) -> drank (groups s) x < f1 -> drank (groups s) x < f2 ->
  sp_read_f (S f1) (store s) (KG (g_id x)) = Some (flat_map (pay s) (sp_leaves_f f2 s (UG (g_id x)))).
Proof.
  intros Rc Gi. pose proof Rc as [I [_ [U _]]]. pose proof Gi as [N [P _]].
  induction f1 as [|f1 IH]; intros f2 x Hx L1 L2; [lia|].
  destruct f2 as [|f2]; [lia|].
  destruct (P x Hx) as [es [He Fa]].
  rewrite read_kg. cbn [sp_leaves_f]. rewrite (lookup_of _ _ _ U He).
  unfold sp_group. rewrite (find_gid _ x N Hx). clear He.
  induction Fa as [|u e ms es' Mu Fa IHF]; [reflexivity|].
  cbn [fold_right map concat]. rewrite IHF. rewrite flat_map_app. unfold rstep at 1.
  destruct u as [m|h]; cbn [mem_ok] in Mu.
  - assert (Lm : sp_leaves_f f2 s (UB m) = [m]) by (destruct f2; reflexivity). rewrite Lm.
    destruct Mu as [b [Hb [Eb [_ [->|[-> Hk]]]]]];
      (assert (Pm : pay s m = [(m, b_data b)]) by (unfold pay; rewrite <- Eb, (sp_block_of s b I Hb); reflexivity));
      cbn [flat_map]; rewrite Pm; cbn [app].
    + reflexivity.
    + rewrite read_kb, (lookup_of _ _ _ U Hk). reflexivity.
  - destruct Mu as [-> [y [Hy [Ey [Ly _]]]]].
    assert (Dy : drank (groups s) y < drank (groups s) x).
    { unfold drank. apply (filter_strict _ _ _ y); [|exact Hy|apply Nat.ltb_lt; lia|apply Nat.ltb_irrefl].
      intros a A. apply Nat.ltb_lt in A. apply Nat.ltb_lt. lia. }
    rewrite <- Ey. rewrite (IH f2 y Hy); [reflexivity|lia|lia].
Qed.

Lemma nodup_kg (gs : list group) : NoDup (map g_id gs) -> NoDup (map (fun x => KG (g_id x)) gs).
Proof.
  induction gs as [|x gs IH]; simpl; intro N; constructor; inversion N as [|? ? N1 N2]; subst; auto.
  intro H. apply N1. apply in_map_iff in H. destruct H as [y [E Hy]]. injection E as E.
  rewrite <- E. apply in_map, Hy.
Qed.

Lemma groups_le_store s : grp_inv s -> length (groups s) <= length (store s).
Proof.
  intros [N [P _]]. rewrite <- (map_length (fun x => KG (g_id x))), <- (map_length fst (store s)).
  apply NoDup_incl_length; [apply nodup_kg, N|].
  intros k Hk. apply in_map_iff in Hk. destruct Hk as [x [<- Hx]].
  destruct (P x Hx) as [es [He _]]. apply in_map_iff. exists (KG (g_id x), VGrp es). auto.
Qed.

Lemma drank_lt gs x : In x gs -> drank gs x < length gs.
Proof.
  intro H. unfold drank. rewrite <- (filter_true_len gs).
  apply (filter_strict _ _ gs x); auto. apply Nat.ltb_irrefl.
Qed.

Lemma top_in_groups s g0 x : sp_top_of s g0 = Some x -> In x (groups s) /\ sp_group s (g_id x) = Some x.
Proof.
  unfold sp_top_of, sp_group. destruct (find (fun y => g_id y =? g0) (groups s)) as [x0|] eqn:F; [|discriminate].
  intro E. injection E as <-. rewrite sp_top_eq.
  assert (Hf : find (fun y => g_id y =? g_id x0) (groups s) = Some x0).
  { apply find_some in F as F'. destruct F' as [_ E]. apply Nat.eqb_eq in E. rewrite E. exact F. }
  clear F. apply find_some in Hf as Hx0. destruct Hx0 as [Hx0 _].
  generalize (length (groups s)). intro f. revert x0 Hf Hx0.
  induction f as [|f IH]; intros x0 Hf Hx0; cbn [climb]; [auto|].
  destruct (g_parent x0); [|auto].
  destruct (find (fun x => g_id x =? n) (groups s)) as [y|] eqn:Fy; [|auto].
  apply IH; [|apply find_some in Fy; tauto].
  apply find_some in Fy as Fy'. destruct Fy' as [_ E]. apply Nat.eqb_eq in E. rewrite E. exact Fy.
Qed.

(* The archive contract for every handle the rendering shows, a block's own
   or a group's. *)
Theorem archive_contract_run (c : config) (d : nat) (s0 : state) (ops : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  forall m u, In m (render s) -> sp_handle_unit (m_form m) (m_pos m) = Some u ->
  m_show m = SHandle (sp_key_of u) (sp_level s u) (sp_payload s (sp_key_of u)) /\
  sp_lookup (sp_key_of u) (store s) <> None /\
  sp_read_path s (sp_key_of u) = Some (sp_unit_payload s u).
Proof.
  intros Init s m u Hm Hu. destruct u as [n|g]; [exact (archive_blocks_run c d s0 ops Init m n Hm Hu)|].
  destruct (all_run c d s0 ops Init) as [Rc [_ Gi]]. fold s in Rc, Gi.
  pose proof Rc as [_ [_ [U _]]]. pose proof Gi as [N [P _]].
  assert (Fe : render s = sp_render s) by exact (proj1 (fidelity_run c d s0 ops Init)).
  rewrite Fe in Hm. destruct (render_unit s m (UG g) Hm Hu) as [b [Hb [g0 [x [Gb [T [Ex Sh]]]]]]].
  destruct (top_in_groups s g0 x T) as [Hx Sx]. subst g.
  destruct (P x Hx) as [es [He _]].
  cbn [sp_key_of sp_level]. rewrite Sx. split; [exact Sh|]. split.
  - rewrite (lookup_of _ _ _ U He). discriminate.
  - unfold sp_read_path, sp_unit_payload, sp_leaves. fold (pay s).
    apply (read_group s Rc Gi); [exact Hx| |pose proof (drank_lt _ _ Hx); lia].
    pose proof (drank_lt _ _ Hx). pose proof (groups_le_store s Gi). lia.
Qed.

(* ------------------------------------------------------------------ *)
(* Deletion of a group's leaves *)

(* Every group key in the store is a live group's. *)
Definition kg_inv (s : state) : Prop :=
  forall h v, In (KG h, v) (store s) -> exists x, In x (groups s) /\ g_id x = h.

Lemma kg_same s s' : store s' = store s -> (forall x, In x (groups s) -> exists x', In x' (groups s') /\ g_id x' = g_id x) ->
  kg_inv s -> kg_inv s'.
Proof.
  intros St G K h v H. rewrite St in H. destruct (K h v H) as [x [Hx Ex]].
  destruct (G x Hx) as [x' [Hx' E']]. exists x'. split; [exact Hx'|congruence].
Qed.

Lemma kg_sub s s' : (forall h v, In (KG h, v) (store s') -> In (KG h, v) (store s) /\
     forall x, In x (groups s) -> g_id x = h -> exists x', In x' (groups s') /\ g_id x' = h) ->
  kg_inv s -> kg_inv s'.
Proof.
  intros C K h v H. destruct (C h v H) as [H1 H2]. destruct (K h v H1) as [x [Hx Ex]]. exact (H2 x Hx Ex).
Qed.

Lemma kg_offload_all xs s : kg_inv s -> kg_inv (offload_all s xs).
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intros s K; simpl; [exact K|].
  apply IH. unfold offload_block; cbv zeta. destruct (find_block s x).
  - apply (kg_sub s); [|exact K]. intros h v H. cbn [store with_store] in H. apply in_put in H.
    destruct H as [[H _]|H]; [|discriminate]. split; [exact H|]. intros y Hy E. exists y. auto.
  - exact K.
Qed.

Lemma kg_restore_unit s u : kg_inv s -> kg_inv (restore_unit s u).
Proof.
  intro K. destruct u as [n|g]; unfold restore_unit; cbv zeta; apply (kg_sub s); try exact K;
  intros h v H; cbn [store with_store with_groups groups] in *; apply in_remove_key in H;
  destruct H as [H E]; (split; [exact H|]); intros y Hy Ey.
  - exists y. auto.
  - exists (clr g y). split; [|destruct (clr_fields g y) as [I1 _]; congruence].
    apply in_map. apply filter_In. split; [exact Hy|]. apply negb_true_iff, Nat.eqb_neq.
    intro F. apply E. cbn. congruence.
Qed.

Lemma kg_delete_unit s u : NoDup (map g_id (groups s)) -> kg_inv s -> kg_inv (delete_unit s u).
Proof.
  intros N K. destruct u as [n|g]; unfold delete_unit; cbv zeta; apply (kg_sub s); try exact K;
  intros h v H; cbn [store with_store with_groups groups] in *.
  - apply in_remove_key in H. destruct H as [H _]. split; [exact H|]. intros y Hy Ey. exists y. auto.
  - apply filter_In in H. destruct H as [H D]. split; [exact H|]. intros y Hy Ey. exists y.
    split; [|exact Ey]. apply filter_In. split; [exact Hy|]. cbn [fst] in D.
    apply negb_true_iff in D. apply negb_true_iff. apply not_true_iff_false. intro U.
    apply not_true_iff_false in D. apply D. apply existsb_exists. exists y. rewrite Ey, Nat.eqb_refl, U. auto.
Qed.

Lemma nodup_delete_unit s u : NoDup (map g_id (groups s)) -> NoDup (map g_id (groups (delete_unit s u))).
Proof. destruct u; unfold delete_unit; cbv zeta; cbn [groups with_store with_groups]; [auto|apply nodup_map_filter]. Qed.

Lemma kg_new_group s us h st : kg_inv s -> kg_inv (new_group s us h st).
Proof.
  intro K. unfold new_group; cbv zeta. intros hh v H. cbn [store with_store with_counts with_groups groups] in *.
  apply in_put in H. destruct H as [[H _]|H].
  - destruct (K hh v H) as [x [Hx Ex]].
    exists (if existsb (uid_eqb (UG (g_id x))) us then group_parent (Some (S (ngroups s))) x else x).
    split; [try (apply in_or_app; left); exact (in_map (fun x0 => if existsb (uid_eqb (UG (g_id x0))) us then group_parent (Some (S (ngroups s))) x0 else x0) (groups s) x Hx)|].
    destruct (existsb _ _); exact Ex.
  - injection H as <- _. eexists. split; [apply in_app_iff; right; left; reflexivity|reflexivity].
Qed.

Lemma kg_archive s us h st : kg_inv s -> kg_inv (archive_units s us h st).
Proof.
  intro K. unfold archive_units.
  destruct us as [|[n|g] [|u r]] eqn:Eus; try (apply kg_new_group; exact K).
  - destruct (find_block s n) as [b|]; [|exact K]. destruct (in_prompt (b_status b)); cbv zeta.
    + apply (kg_sub s); [|exact K]. intros hh v H. cbn [store with_store] in H. apply in_put in H.
      destruct H as [[H _]|H]; [|discriminate]. split; [exact H|]. intros y Hy Ey. exists y. auto.
    + exact K.
  - destruct (find_group s g) as [x|]; [|exact K].
    intros hh v H. destruct (K hh v H) as [y [Hy Ey]].
    exists (if g_id y =? g then group_level_h (S (g_level x)) h y else y).
    split; [exact (in_map (fun y => if g_id y =? g then group_level_h (S (g_level x)) h y else y) (groups s) y Hy)|]. destruct (g_id y =? g); exact Ey.
Qed.

Lemma kg_step s o : grp_inv s -> kg_inv s -> kg_inv (fst (step s o)).
Proof.
  intros Gi K. destruct o; cbn [step].
  - destruct k; try exact K; unfold reg_plain; destruct (pending s); try exact K;
    destruct (_ && _); exact K.
  - unfold reg_call. destruct (pending s); [|exact K]. destruct ids; [exact K|].
    destruct (negb _); [exact K|]. destruct (_ && _); exact K.
  - unfold reg_result. destruct (negb _); [exact K|].
    destruct (decide _ _ _ _) as [g off]. cbn [fst]. wf_split; [|exact K].
    exact (kg_offload_all off s K).
  - unfold act. destruct (resolve s AArchive us) as [l|e]; [|exact K]. cbn [fst].
    wf_split; [|exact K].
    apply kg_archive, K.
  - unfold act. destruct (resolve s ARestore us) as [l|e]; [|exact K]. cbn [fst].
    wf_split_; [|exact K].
    clear Gi. revert s K. induction l as [|u l IH]; intros s K; simpl; [exact K|].
    apply IH, kg_restore_unit, K.
  - unfold act. destruct (resolve s ADelete us) as [l|e]; [|exact K]. cbn [fst].
    wf_split_; [|exact K].
    pose proof (proj1 Gi) as N. clear Gi. revert s N K. induction l as [|u l IH]; intros s N K; simpl; [exact K|].
    apply IH; [apply nodup_delete_unit, N|apply kg_delete_unit; [exact N|exact K]].
  - destruct (find_block s n); [destruct (recover s n)|]; exact K.
  - exact K.
Qed.

Lemma climb_sub gs gs' : NoDup (map g_id gs) -> NoDup (map g_id gs') -> incl gs' gs -> parents_ok gs' ->
  forall f y, In y gs' -> climb gs' f y = climb gs f y.
Proof.
  intros N N' Inc Q. induction f as [|f IH]; intros y Hy; [reflexivity|]. cbn [climb].
  destruct (g_parent y) as [p|] eqn:P; [|reflexivity].
  destruct (Q y p Hy P) as [z [Hz [Ez _]]]. subst p.
  rewrite (find_gid gs' z N' Hz), (find_gid gs z N (Inc z Hz)). apply IH, Hz.
Qed.

Lemma under_sub s s' g y :
  NoDup (map g_id (groups s)) -> NoDup (map g_id (groups s')) -> incl (groups s') (groups s) ->
  parents_ok (groups s') -> length (groups s') <= length (groups s) -> In y (groups s') ->
  under s' g y = under s g y.
Proof.
  intros N N' Inc Q L Hy. unfold under.
  assert (E : climb (groups s') (length (groups s')) y = climb (groups s) (length (groups s)) y).
  { pose proof (urank_lt _ _ Hy) as U.
    rewrite <- (climb_fuel (groups s') N' Q (length (groups s')) y (length (groups s)) Hy); [|lia|exact L].
    apply climb_sub; assumption. }
  rewrite E. reflexivity.
Qed.

(* Block [n] sits in a group under top-level group [g]. *)
Definition lc (s : state) (g n : nat) : Prop :=
  exists b y, In b (blocks s) /\ b_id b = n /\ b_group b = Some (g_id y) /\ In y (groups s) /\
    under s g y = true.

Lemma filter_len {A} (p : A -> bool) l : length (filter p l) <= length l.
Proof. induction l as [|a l IH]; simpl; [lia|]. destruct (p a); simpl; lia. Qed.

Lemma lc_delete_unit s g n u :
  rec_inv s -> grp_inv s -> unit_sel s u -> u <> UG g -> lc s g n -> lc (delete_unit s u) g n.
Proof.
  intros Rc Gi M Ne [b [y [Hb [Eb [Gb [Hy Uy]]]]]]. pose proof Gi as [N [_ [Q _]]].
  destruct u as [m|g']; cbn [unit_sel] in M.
  - exists b, y. unfold delete_unit; cbv zeta. split; [|auto].
    apply in_update_keep; [exact Hb|]. rewrite (proj2 (Nat.eqb_neq _ _) (grouped_ne s m b M Hb ltac:(congruence))).
    reflexivity.
  - assert (Ug : under s g' y = false).
    { unfold under in *. apply Nat.eqb_eq in Uy. apply Nat.eqb_neq. intro E. apply Ne. congruence. }
    assert (Dy : existsb (fun x => (g_id x =? g_id y) && under s g' x) (groups s) = false).
    { apply not_true_iff_false. intro E. apply existsb_exists in E. destruct E as [z [Hz E]].
      apply andb_true_iff in E. destruct E as [E1 E2]. apply Nat.eqb_eq in E1.
      rewrite (nodup_gid_eq _ z y N Hz Hy E1) in E2. congruence. }
    pose proof (grp_delete_group s g' Rc Gi) as [N' [_ [Q' _]]].
    assert (Hy' : In y (groups (delete_unit s (UG g')))).
    { unfold delete_unit; cbv zeta. cbn [groups with_store with_groups]. apply filter_In.
      rewrite Ug. auto. }
    exists b, y. split; [|split; [exact Eb|split; [exact Gb|split; [exact Hy'|]]]].
    + unfold delete_unit; cbv zeta. apply in_update_keep; [exact Hb|]. cbv beta. rewrite Gb, Dy. reflexivity.
    + rewrite (under_sub s _ g y N N'); [exact Uy| | | |exact Hy'].
      * unfold delete_unit; cbv zeta. cbn [groups with_store with_groups]. intros z Hz.
        apply filter_In in Hz. tauto.
      * exact Q'.
      * unfold delete_unit; cbv zeta. cbn [groups with_store with_groups]. apply filter_len.
Qed.

Lemma same_block s b0 b : ids_ok s -> In b0 (blocks s) -> In b (blocks s) -> b_id b0 = b_id b -> b0 = b.
Proof.
  intros I H0 H E. pose proof (find_block_unique s b0 I H0) as F0.
  rewrite E, (find_block_unique s b I H) in F0. congruence.
Qed.

Lemma lc_gone s g n : rec_inv s -> grp_inv s -> lc s g n -> blk_gone (delete_unit s (UG g)) n.
Proof.
  intros Rc Gi [b [y [Hb [Eb [Gb [Hy Uy]]]]]]. pose proof Gi as [N [_ [_ R]]]. pose proof (proj1 Rc) as I.
  assert (Dy : existsb (fun x => (g_id x =? g_id y) && under s g x) (groups s) = true).
  { apply existsb_exists. exists y. rewrite Nat.eqb_refl, Uy. auto. }
  assert (Pb : protected s b = false).
  { unfold protected. destruct (R b Hb ltac:(congruence)) as [St|St]; rewrite St; reflexivity. }
  unfold delete_unit; cbv zeta. split; [|split].
  - pose proof (ids_range s b I Hb). change (1 <= n <= nblocks s). lia.
  - intros b' Hb' E'. destruct (blocks_update_in s _ b' Hb') as [b0 [Hb0 [[P0 ->]|[P0 ->]]]].
    + rewrite (same_block s b0 b I Hb0 Hb ltac:(congruence)) in P0. congruence.
    + assert (Ib0 : b_id b0 = n).
      { rewrite <- E'. cbv beta. match goal with |- context [if ?c then _ else _] => destruct c end; reflexivity. }
      rewrite (same_block s b0 b I Hb0 Hb ltac:(congruence)).
      cbv beta. rewrite Gb, Dy. split; reflexivity.
  - intros kv Hkv E. apply filter_In in Hkv. destruct Hkv as [_ K]. rewrite E in K.
    rewrite <- Eb, (find_block_unique s b I Hb) in K. cbv beta in K. rewrite Gb, Dy in K. discriminate.
Qed.

Lemma fold_lc l s g n :
  rec_inv s -> grp_inv s -> top_in s g -> lc s g n -> In (UG g) l -> (forall u, In u l -> unit_sel s u) ->
  blk_gone (fold_left delete_unit l s) n.
Proof.
  revert s. induction l as [|u l IH]; intros s Rc Gi T L H M; [destruct H|]. simpl.
  destruct (uid_eqb u (UG g)) eqn:U.
  - apply uid_eqb_eq in U. subst u. apply gone_delete, lc_gone; assumption.
  - assert (Ne : u <> UG g) by (intro E; subst u; cbn in U; rewrite Nat.eqb_refl in U; discriminate).
    assert (Mu : unit_sel s u) by (apply M; left; reflexivity).
    apply IH.
    + apply rec_delete_unit, Rc.
    + apply grp_delete_unit; assumption.
    + apply top_delete_unit; assumption.
    + apply lc_delete_unit; assumption.
    + destruct H as [H|H]; [exfalso; exact (Ne H)|exact H].
    + intros v Hv. apply sel_delete_unit, M. right; exact Hv.
Qed.

Lemma forall2_in_l {A B} (P : A -> B -> Prop) l1 l2 a : Forall2 P l1 l2 -> In a l1 -> exists b, In b l2 /\ P a b.
Proof.
  intro F. induction F as [|x y l1 l2 Pxy F IH]; [intros []|]. intros [<-|H].
  - exists y. split; [left; reflexivity|exact Pxy].
  - destruct (IH H) as [b [Hb Pb]]. exists b. split; [right; exact Hb|exact Pb].
Qed.

Lemma leaves_lc s g : rec_inv s -> grp_inv s ->
  forall f x n, In x (groups s) -> under s g x = true -> In n (sp_leaves_f f s (UG (g_id x))) -> lc s g n.
Proof.
  intros Rc Gi. pose proof Gi as [N [P [Q _]]].
  induction f as [|f IH]; intros x n Hx Ux Hn; [destruct Hn|].
  cbn [sp_leaves_f] in Hn. unfold sp_group in Hn. rewrite (find_gid _ x N Hx) in Hn.
  apply in_concat in Hn. destruct Hn as [l [Hl Hn]]. apply in_map_iff in Hl. destruct Hl as [u [<- Hu]].
  destruct (P x Hx) as [es [_ Fa]]. destruct (forall2_in_l _ _ _ _ Fa Hu) as [e [_ Mu]].
  destruct u as [m|h]; cbn [mem_ok] in Mu.
  - rewrite sp_leaves_block in Hn. destruct Hn as [<-|[]].
    destruct Mu as [b [Hb [Eb [Gb _]]]]. exists b, x. auto.
  - destruct Mu as [_ [y [Hy [Ey [_ Py]]]]]. subst h.
    apply (IH y n Hy); [|exact Hn]. rewrite (under_parent s g x y N Q Hx Hy Py). exact Ux.
Qed.

Lemma forall2_in_r {A B} (P : A -> B -> Prop) l1 l2 b : Forall2 P l1 l2 -> In b l2 -> exists a, In a l1 /\ P a b.
Proof.
  intro F. induction F as [|x y l1 l2 Pxy F IH]; [intros []|]. intros [<-|H].
  - exists x. split; [left; reflexivity|exact Pxy].
  - destruct (IH H) as [a [Ha Pa]]. exists a. split; [right; exact Ha|exact Pa].
Qed.

Definition all_inv2 (s : state) : Prop := all_inv s /\ kg_inv s.

Lemma all2_step s o : all_inv2 s -> all_inv2 (fst (step s o)).
Proof.
  intros [[A [B C]] K]. split; [split; [exact (rec_step s o A)|split; [exact (gids_step s o B)|exact (grp_step s o A B C)]]|].
  exact (kg_step s o C K).
Qed.

Lemma all2_run c d s0 ops : init c d = Some s0 -> all_inv2 (run s0 ops).
Proof.
  intro Init. apply run_invariant; [|intros; apply all2_step; assumption].
  split; [exact (all_run c d s0 [] Init)|].
  unfold init in Init. destruct (_ <=? _); inversion Init; subst. intros h v [].
Qed.

(* No store entry holds a deleted block's bytes: its own key is gone, and a
   group payload inlines only blocks inside that group. *)
Lemma gone_holds s n : all_inv2 s -> blk_gone s n -> forall kv, In kv (store s) -> sp_holds n kv = false.
Proof.
  intros [[Rc [_ Gi]] K] [_ [D Cl]] [k v] H. pose proof Rc as [I [[S1 _] [U _]]]. pose proof Gi as [_ [P _]].
  destruct k as [m|h].
  - destruct (S1 m v H) as [d [-> _]]. cbn [sp_holds]. apply Nat.eqb_neq. intro E. subst m.
    exact (Cl _ H eq_refl).
  - destruct v as [d|es]; [reflexivity|]. cbn [sp_holds].
    destruct (K h _ H) as [x [Hx Ex]]. subst h. destruct (P x Hx) as [es' [He Fa]].
    assert (Ee : es = es').
    { destruct (in_lookup _ _ _ H) as [v L]. pose proof (lookup_unique _ _ _ _ U H L) as E1.
      pose proof (lookup_unique _ _ _ _ U He L) as E2. congruence. }
    subst es'. apply not_true_iff_false. intro E. apply existsb_exists in E. destruct E as [e [He' E]].
    destruct e as [[m|m] d|u k']; try discriminate. apply Nat.eqb_eq in E. subst m.
    destruct (forall2_in_r _ _ _ _ Fa He') as [u [_ Mu]].
    destruct u as [m|h]; cbn [mem_ok] in Mu.
    + destruct Mu as [b [Hb [Eb [Gb [Ei|[Ei _]]]]]]; [|discriminate].
      injection Ei as Em _. destruct (D b Hb ltac:(congruence)) as [_ G]. congruence.
    + destruct Mu as [Ei _]. discriminate.
Qed.

Theorem deletion_leaves_run (c : config) (d : nat) (s0 : state) (ops : list op) (us : list uid)
    (dm : nat) (later : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  r_ok (snd (step s (ODelete us dm))) = None ->
  let s' := run (fst (step s (ODelete us dm))) later in
  forall u, In u us ->
  sp_lookup (sp_key_of u) (store s') = None /\
  forall n, In n (sp_leaves s u) ->
    sp_deleted s' n = true /\ recover s' n = None /\
    forall kv, In kv (store s') -> sp_holds n kv = false.
Proof.
  intros Init s Ok s' u Hu. split; [exact (proj1 (deletion_run c d s0 ops us dm later Init Ok u Hu))|].
  intros n Hn.
  pose proof (all2_run c d s0 ops Init) as A. fold s in A. pose proof A as [[Rc [Gd Gi]] _].
  pose proof (proj1 Rc) as I.
  assert (G1 : blk_gone (fst (step s (ODelete us dm))) n).
  { destruct u as [m|g].
    - unfold sp_leaves in Hn. rewrite sp_leaves_block in Hn. destruct Hn as [<-|[]].
      exact (delete_gone s us dm I Gd Ok (UB m) Hu).
    - revert Ok. cbn [step]. unfold act.
      destruct (resolve s ADelete us) as [l|e] eqn:R; cbn [snd r_ok refuse]; [|discriminate].
      wf_split_; cbn [snd r_ok refuse]; [|discriminate].
      intros _. cbn [fst]. destruct (resolve_sel _ _ _ _ R) as [_ Inc].
      pose proof (resolve_checked _ _ _ _ R) as Ck.
      pose proof (Ck (UG g) (Inc _ Hu)) as Cg. unfold check_unit in Cg.
      destruct (find_group s g) as [x|] eqn:F; [|discriminate].
      destruct (g_parent x) eqn:Px; [discriminate|].
      apply find_some in F. destruct F as [Hx Ex]. apply Nat.eqb_eq in Ex. subst g.
      apply (fold_lc l s (g_id x) n Rc Gi); [exists x; auto| | exact (Inc _ Hu)|].
      + apply (leaves_lc s (g_id x) Rc Gi (S (length (groups s))) x n Hx); [|exact Hn].
        unfold under. rewrite climb_top by exact Px. apply Nat.eqb_refl.
      + apply (sel_units s ADelete l I Gi eq_refl Ck). discriminate. }
  pose proof (gone_run _ later n G1) as G. fold s' in G.
  assert (A' : all_inv2 s').
  { unfold s'. apply run_invariant; [apply all2_step, A|intros; apply all2_step; assumption]. }
  destruct (gone_facts s' n (proj1 (proj1 (proj1 A'))) G) as [_ [Dl Rv]].
  split; [exact Dl|split; [exact Rv|]]. exact (gone_holds s' n A' G).
Qed.
