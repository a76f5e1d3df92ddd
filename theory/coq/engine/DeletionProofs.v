(* Deletion on the engine model: what delete removes stays removed.

   Methodology, Context Stream: "delete removes the selected content
   permanently"; "Workspace invariants": archived payload bytes remain
   recoverable "unless the agent explicitly deletes them".  Statements.v
   restates the theorem proved here ([deletion_run]) in the paper's words. *)

From Coq Require Import List Arith Bool Lia PeanoNat.
Import ListNotations.
From VistaLabEngine Require Import Model Spec Claims Theorems SpecProofs.

(* ------------------------------------------------------------------ *)
(* What "gone" means for a block and for a group *)

(* A block the agent deleted: its number was used (from 1), every block
   with that number is a tombstone outside every group, and no store entry
   is its key. *)
Definition dead_ok (n : nat) (b : block) : Prop :=
  b_id b = n -> b_status b = Deleted /\ b_group b = None.

Definition store_clean (st : list (key * value)) (n : nat) : Prop :=
  forall kv, In kv st -> fst kv <> KB n.

Definition blk_gone (s : state) (n : nat) : Prop :=
  1 <= n <= nblocks s /\ (forall b, In b (blocks s) -> dead_ok n b) /\ store_clean (store s) n.

(* A group the agent deleted: its number was used, and no store entry is
   its key. *)
Definition grp_gone (s : state) (g : nat) : Prop :=
  g <= ngroups s /\ forall kv, In kv (store s) -> fst kv <> KG g.

(* ------------------------------------------------------------------ *)
(* Store and block helpers *)

Lemma clean_filter st n p : store_clean st n -> store_clean (filter p st) n.
Proof. intros C kv H. apply filter_In in H. exact (C _ (proj1 H)). Qed.

Lemma clean_remove st n k : store_clean st n -> store_clean (remove_key k st) n.
Proof. apply clean_filter. Qed.

Lemma clean_put st n k v : store_clean st n -> k <> KB n -> store_clean (put k v st) n.
Proof.
  intros C K kv H. apply in_put in H. destruct H as [[H _]| ->]; [exact (C _ H)|]. exact K.
Qed.

Lemma clean_remove_self st n : store_clean (remove_key (KB n) st) n.
Proof. intros kv H. apply in_remove_key in H. exact (proj2 H). Qed.

Lemma dead_update s f n :
  (forall b, dead_ok n b -> dead_ok n (f b)) ->
  (forall b, In b (blocks s) -> dead_ok n b) ->
  forall b, In b (blocks (update s f)) -> dead_ok n b.
Proof.
  intros Hf H b' Hb'. destruct (blocks_update_in s f b' Hb') as [b [Hb [[_ ->]|[_ ->]]]]; auto.
Qed.

Lemma dead_if n m b (b' : block) :
  m <> n -> b_id b' = b_id b -> dead_ok n b -> dead_ok n (if b_id b =? m then b' else b).
Proof.
  intros M G D. destruct (Nat.eqb_spec (b_id b) m) as [E|E]; auto.
  intro E'. lia.
Qed.

Lemma dead_set n st g lvl h tok b :
  dead_ok n b -> (b_id b = n -> st = Deleted /\ g = None) -> dead_ok n (set_block st g lvl h tok b).
Proof. unfold dead_ok, set_block. cbn [b_id b_status b_group]. auto. Qed.

Lemma set_id st g lvl h tok b : b_id (set_block st g lvl h tok b) = b_id b.
Proof. reflexivity. Qed.

Lemma in_insert_by_r {A} (k : A -> nat) x y l : y = x \/ In y l -> In y (insert_by k x l).
Proof.
  induction l as [|z l IH]; simpl; intros [H|H]; auto;
  destruct (k x <=? k z); simpl; auto; destruct H; auto.
Qed.

Lemma in_sort_by_r {A} (k : A -> nat) y l : In y l -> In y (sort_by k l).
Proof.
  unfold sort_by. induction l as [|x l IH]; simpl; [intros []|].
  intros [H|H]; apply in_insert_by_r; auto.
Qed.

Lemma in_dedup_acc_r seen y l : In y l -> In y seen \/ In y (dedup_acc seen l).
Proof.
  revert seen; induction l as [|x l IH]; intros seen; simpl; [intros []|].
  destruct (existsb (uid_eqb x) seen) eqn:E.
  - intros [<-|H]; [left|apply IH; auto].
    apply existsb_exists in E. destruct E as [v [Hv Ev]]. apply uid_eqb_eq in Ev. subst. auto.
  - intros [<-|H]; [right; left; auto|].
    destruct (IH (x :: seen) H) as [[<-|H']|H'];
    [right; left; reflexivity|left; exact H'|right; right; exact H'].
Qed.

Lemma incl_sort_dedup (k : uid -> nat) us : incl us (sort_by k (dedup us)).
Proof.
  intros y H. apply in_sort_by_r. destruct (in_dedup_acc_r [] y us H) as [[]|H']; auto.
Qed.

(* Each unit the selection let through names no deleted block. *)
Lemma resolve_sel s a us l : resolve s a us = inl l -> selectable s l /\ incl us l.
Proof.
  unfold resolve. destruct us as [|u0 us0]; [discriminate|].
  destruct (first_error s a (u0 :: us0)) eqn:E; [discriminate|].
  intro H. injection H as El. subst l. split.
  - intros n Hn.
    assert (Hn' : In (UB n) (u0 :: us0)).
    { unfold sort_by, dedup in Hn. cbn [dedup_acc existsb fold_right] in Hn.
      apply in_insert_by in Hn. destruct Hn as [Hn|Hn]; [left; auto|right].
      apply in_sort_by in Hn. apply (in_dedup_acc [u0]); exact Hn. }
    pose proof (first_error_none _ _ _ E _ Hn') as Cn. unfold check_unit in Cn.
    destruct (find_block s n) as [b|]; [|discriminate].
    exists b. split; auto.
    destruct (b_status b) eqn:St; destruct a; try discriminate;
    destruct (b_group b); try discriminate; split; auto; congruence.
  - exact (incl_sort_dedup (unit_key s) (u0 :: us0)).
Qed.

(* ------------------------------------------------------------------ *)
(* The guard offloads visible blocks only *)

Lemma candidates_visible s n p :
  In p (candidates s n) -> In (fst p) (blocks s) /\ b_status (fst p) = Visible.
Proof.
  unfold candidates. intro H. apply in_flat_map in H. destruct H as [t [Ht Hp]].
  destruct t as [b|c rs]; [contradiction|]. apply in_map_iff in Hp.
  destruct Hp as [r [<- Hr]]. apply filter_In in Hr. destruct Hr as [Hr F]. cbn [fst]. split.
  - unfold blocks. apply in_flat_map. exists (TC c rs). simpl. auto.
  - destruct (b_status r); try discriminate; reflexivity.
Qed.

Definition named (cs : list (block * bool)) (x : nat) : Prop := exists p, In p cs /\ b_id (fst p) = x.

Lemma take_plan_sub cs P Q e acc :
  (forall x, In x (fst (fst (take_plan cs P Q e acc))) -> In x acc \/ named cs x) /\
  incl (snd (fst (take_plan cs P Q e acc))) cs.
Proof.
  revert P Q acc. induction cs as [|[x tf] cs IH]; intros P Q acc; simpl.
  - split; [intros y Hy; left; apply in_rev in Hy; exact Hy | intros y []].
  - destruct (e + (Q + pick tf (b_p x)) <=? P + pick tf (b_c x)); cbn [fst snd].
    + split; [|intros y Hy; right; exact Hy].
      intros y Hy. apply in_app_iff in Hy. destruct Hy as [Hy|[<-|[]]].
      * left. apply in_rev in Hy. exact Hy.
      * right; exists (x, tf); simpl; auto.
    + destruct (IH (P + pick tf (b_c x)) (Q + pick tf (b_p x)) (b_id x :: acc)) as [A B].
      split; [|intros y Hy; right; apply B, Hy].
      intros y Hy. destruct (A y Hy) as [[<-|H]|[p [Hp Ep]]].
      * right. exists (x, tf). simpl; auto.
      * left; exact H.
      * right. exists p. simpl; auto.
Qed.

Lemma rounds_sub f s cs e ds i done x :
  In x (snd (rounds f s cs e ds i done)) -> In x done \/ named cs x.
Proof.
  revert s cs e i done. induction f as [|f IH]; intros s cs e i done; simpl; [auto|].
  pose proof (take_plan_sub cs 0 0 e []) as [A B].
  destruct (take_plan cs 0 0 e []) as [[plan rest] enough]. cbn [fst snd] in A, B.
  destruct (negb enough); [cbn [snd]; auto|].
  assert (Hp : forall y, In y plan -> named cs y).
  { intros y Hy. destruct (A y Hy) as [[]|H]; exact H. }
  destruct (_ <=? _); cbn [snd].
  - intro H. apply in_app_iff in H. destruct H as [H|H]; auto.
  - intro H. destruct (IH _ _ _ _ _ H) as [H'|[p [Hp' Ep]]].
    + apply in_app_iff in H'. destruct H' as [H'|H']; auto.
    + right. exists p. split; auto.
Qed.

(* The guard's offload order only filters and reorders the candidates
   (Model.v, guard_order: with keep_pending, those before the kept batch;
   with cache_prefix, the results after the cut first, then those inside
   it), so every entry of it is a candidate. *)
Lemma guard_order_sub s1 n cs e : In e (guard_order s1 n cs) -> In e cs.
Proof.
  unfold guard_order. cbv zeta.
  assert (Pool : In e (if tail_on s1 then filter (fun e => b_id (fst e) <? owner s1) cs else cs) -> In e cs).
  { destruct (tail_on s1); [intro H; apply filter_In in H; tauto|auto]. }
  destruct (cache_prefix (cfg s1)); [|auto].
  intro H. apply in_app_iff in H.
  destruct H as [H|H]; apply filter_In in H; apply Pool; tauto.
Qed.

Lemma decide_visible s1 r pc ds x :
  In x (snd (decide s1 r pc ds)) -> exists b, In b (blocks s1) /\ b_id b = x /\ b_status b = Visible.
Proof.
  unfold decide. destruct (_ <? _); [intros []|]. destruct (_ <=? _); [intros []|].
  intro H. destruct (rounds_sub _ _ _ _ _ _ _ _ H) as [[]|[p [Hp Ep]]].
  destruct (candidates_visible _ _ _ (guard_order_sub _ _ _ _ Hp)) as [B V]. exists (fst p). auto.
Qed.

Lemma gone_offload_all xs s n :
  blk_gone s n -> (forall x, In x xs -> x <> n) -> blk_gone (offload_all s xs) n.
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intros s G X; simpl; auto.
  apply IH; [|intros y Hy; apply X; right; exact Hy].
  assert (Xn : x <> n) by (apply X; left; reflexivity).
  destruct G as [N [D C]]. unfold offload_block; cbv zeta.
  destruct (find_block s x) as [b|]; (split; [exact N|split]);
    try (apply dead_update; [intros b' Db; apply dead_if; auto | exact D]); cbn [store with_store].
  - apply clean_put; auto. congruence.
  - exact C.
Qed.

(* ------------------------------------------------------------------ *)
(* A deleted block stays deleted *)

Lemma gone_restore l s n :
  blk_gone s n -> (forall m, In (UB m) l -> m <> n) -> blk_gone (fold_left restore_unit l s) n.
Proof.
  revert s. induction l as [|u l IH]; intros s G X; simpl; auto.
  apply IH; [|intros m Hm; apply X; right; exact Hm].
  destruct G as [N [D C]]. destruct u as [m|g]; unfold restore_unit; cbv zeta.
  - assert (M : m <> n) by (apply X; left; reflexivity).
    split; [exact N|split; [|exact (clean_remove _ _ _ C)]].
    apply dead_update; [intros b Db; apply dead_if; auto | exact D].
  - split; [exact N|split; [|exact (clean_remove _ _ _ C)]].
    apply dead_update; [|exact D]. intros b Db.
    destruct (b_group b) as [g'|] eqn:Gb; [|exact Db].
    intro E. assert (E' : b_id b = n) by (destruct (g' =? g); [destruct (inlined _ _)|]; exact E).
    destruct (Db E') as [_ Gn]. congruence.
Qed.

Ltac dead_branch Db :=
  match goal with
  | |- dead_ok _ (if ?c then _ else _) => destruct c; [apply dead_set; [exact Db | intros; split; reflexivity] | exact Db]
  end.

Lemma gone_delete_unit s u n : blk_gone s n -> blk_gone (delete_unit s u) n.
Proof.
  intros [N [D C]]. destruct u as [m|g]; unfold delete_unit; cbv zeta.
  - split; [exact N|split; [|exact (clean_remove _ _ _ C)]].
    apply dead_update; [|exact D]. intros b Db. dead_branch Db.
  - split; [exact N|split; [|exact (clean_filter _ _ _ C)]].
    apply dead_update; [|exact D]. intros b Db. dead_branch Db.
Qed.

Lemma gone_delete l s n : blk_gone s n -> blk_gone (fold_left delete_unit l s) n.
Proof.
  revert s. induction l as [|u l IH]; intros s G; simpl; auto. apply IH, gone_delete_unit, G.
Qed.

Lemma gone_new_group s l h st n :
  blk_gone s n -> (forall m, In (UB m) l -> m <> n) -> blk_gone (new_group s l h st) n.
Proof.
  intros [N [D C]] X. unfold new_group; cbv zeta.
  split; [exact N|split].
  - apply dead_update; [|exact D]. intros b Db.
    destruct (existsb (uid_eqb (UB (b_id b))) l) eqn:E; [|exact Db].
    apply existsb_uid in E. intro En. exfalso. apply (X _ E).
    destruct (in_prompt (b_status b)); exact En.
  - apply clean_put; [exact C|discriminate].
Qed.

Lemma gone_archive s l h st n :
  blk_gone s n -> (forall m, In (UB m) l -> m <> n) -> blk_gone (archive_units s l h st) n.
Proof.
  intros G X. unfold archive_units.
  destruct l as [|[m|g] [|u r]]; cbv beta iota; try (apply gone_new_group; auto).
  - assert (M : m <> n) by (apply X; left; reflexivity). destruct G as [N [D C]].
    destruct (find_block s m) as [b|]; [|exact (conj N (conj D C))].
    destruct (in_prompt (b_status b)); (split; [exact N|split]).
    + apply dead_update; [intros b' Db; apply dead_if; auto|exact D].
    + apply clean_put; [exact C|congruence].
    + apply dead_update; [intros b' Db; apply dead_if; auto|exact D].
    + exact C.
  - destruct G as [N [D C]]. destruct (find_group s g); exact (conj N (conj D C)).
Qed.

Lemma sel_not_gone s l n :
  blk_gone s n -> selectable s l -> forall m, In (UB m) l -> m <> n.
Proof.
  intros [_ [D _]] Sl m Hm E. destruct (Sl m Hm) as [b [F [_ Nd]]].
  destruct (find_block_in s m b F) as [Hb Eb]. subst m.
  exact (Nd (proj1 (D b Hb Eb))).
Qed.

Lemma gone_step s o n : blk_gone s n -> blk_gone (fst (step s o)) n.
Proof.
  intro G. pose proof G as [N [D C]]. destruct o; cbn [step].
  - destruct k; try exact G; unfold reg_plain; destruct (pending s); try exact G;
    destruct (_ && _); cbn [fst]; try exact G;
    (split; [cbn [nblocks with_dash with_counts]; lia | split; [|exact C]]);
    intros b Hb; autorewrite with st in Hb; rewrite blocks_snoc in Hb;
    apply in_app_iff in Hb; (destruct Hb as [Hb|[<-|[]]]; [exact (D _ Hb)|]);
    intro E; cbn in E; lia.
  - unfold reg_call. destruct (pending s); [|exact G]. destruct ids; [exact G|].
    destruct (negb _); cbn [fst]; [exact G|].
    destruct (keep_pending (cfg s) && _); cbn [fst]; [exact G|].
    split; [cbn [nblocks with_dash with_counts]; lia | split; [|exact C]].
    intros b Hb. autorewrite with st in Hb. rewrite blocks_snoc in Hb.
    apply in_app_iff in Hb. destruct Hb as [Hb|[<-|[]]]; [exact (D _ Hb)|].
    intro E. cbn in E. lia.
  - unfold reg_result. destruct (negb _) eqn:Ng; [exact G|].
    destruct (decide _ _ _ _) as [g off] eqn:Dc. cbn [fst]. wf_split; [|exact G].
    apply Bool.negb_false_iff, andb_true_iff in Ng. destruct Ng as [_ Ng].
    assert (Off : forall x, In x off -> x <> n).
    { intros x Hx.
      match type of Dc with decide ?a ?b ?c ?d = _ =>
        pose proof (decide_visible a b c d x) as V end.
      rewrite Dc in V. destruct (V Hx) as [b [Hb [Eb Vb]]].
      unfold blocks in Hb. cbn [turns with_counts with_pending with_turns] in Hb.
      rewrite blocks_add_result in Hb by exact Ng.
      apply in_app_iff in Hb. destruct Hb as [Hb|[<-|[]]].
      - intro E. rewrite E in Eb. destruct (D b Hb Eb) as [Db _]. congruence.
      - intro E. cbn in Eb. lia. }
    destruct (gone_offload_all off s n G Off) as [N2 [D2 C2]].
    split; [cbn [nblocks with_dash with_counts]; lia| split; [|exact C2]].
    intros b Hb. unfold blocks in Hb. cbn [turns with_dash with_counts with_pending with_turns] in Hb.
    rewrite blocks_add_result in Hb by (apply last_is_call_offload_all; exact Ng).
    apply in_app_iff in Hb. destruct Hb as [Hb|[<-|[]]]; [exact (D2 _ Hb)|].
    intro E. rej; cbn in E; lia.
  - unfold act. destruct (resolve s AArchive us) as [l|e] eqn:R; cbn [fst]; [|exact G].
    wf_split; [|exact G]. destruct (resolve_sel _ _ _ _ R) as [Sl _].
    exact (gone_archive s l h stubs n G (sel_not_gone s l n G Sl)).
  - unfold act. destruct (resolve s ARestore us) as [l|e] eqn:R; cbn [fst]; [|exact G].
    wf_split; [|exact G]. destruct (resolve_sel _ _ _ _ R) as [Sl _].
    exact (gone_restore l s n G (sel_not_gone s l n G Sl)).
  - unfold act. destruct (resolve s ADelete us) as [l|e] eqn:R; cbn [fst]; [|exact G].
    wf_split; [|exact G]. exact (gone_delete l s n G).
  - destruct (find_block s n0); [destruct (recover s n0)|]; exact G.
  - exact G.
Qed.

Lemma gone_run s os n : blk_gone s n -> blk_gone (run s os) n.
Proof. revert s; induction os as [|o os IH]; intros s G; simpl; auto. apply IH, gone_step, G. Qed.

(* ------------------------------------------------------------------ *)
(* A deleted group's payload never comes back *)

Lemma nog_filter (st : list (key * value)) g p :
  (forall kv, In kv st -> fst kv <> KG g) -> forall kv, In kv (filter p st) -> fst kv <> KG g.
Proof. intros C kv H. apply filter_In in H. exact (C _ (proj1 H)). Qed.

Lemma nog_put (st : list (key * value)) g k v :
  (forall kv, In kv st -> fst kv <> KG g) -> k <> KG g ->
  forall kv, In kv (put k v st) -> fst kv <> KG g.
Proof. intros C K kv H. apply in_put in H. destruct H as [[H _]| ->]; [exact (C _ H)|exact K]. Qed.

Lemma ggone_offload_all xs s g : grp_gone s g -> grp_gone (offload_all s xs) g.
Proof.
  unfold offload_all. revert s. induction xs as [|x xs IH]; intros s [N C]; simpl; [split; auto|].
  apply IH. unfold offload_block; cbv zeta.
  destruct (find_block s x); (split; [exact N|]); [|exact C].
  apply nog_put; [exact C|discriminate].
Qed.

Lemma ggone_restore l s g : grp_gone s g -> grp_gone (fold_left restore_unit l s) g.
Proof.
  revert s. induction l as [|u l IH]; intros s [N C]; simpl; [split; auto|].
  apply IH. destruct u; unfold restore_unit; cbv zeta; (split; [exact N|]); apply nog_filter, C.
Qed.

Lemma ggone_delete l s g : grp_gone s g -> grp_gone (fold_left delete_unit l s) g.
Proof.
  revert s. induction l as [|u l IH]; intros s [N C]; simpl; [split; auto|].
  apply IH. destruct u; unfold delete_unit; cbv zeta; (split; [exact N|]); apply nog_filter, C.
Qed.

Lemma ggone_archive s l h st g : grp_gone s g -> grp_gone (archive_units s l h st) g.
Proof.
  intros [N C]. unfold archive_units, new_group; cbv zeta.
  destruct l as [|[m|x] [|u r]]; cbv beta iota;
  try (destruct (find_block s m) as [b|]; [destruct (in_prompt (b_status b))|]);
  try (destruct (find_group s x));
  (split; [cbn [ngroups with_counts update with_turns with_store update_group with_groups]; lia|]);
  cbn [store with_counts with_store with_groups update with_turns update_group];
  try exact C; apply nog_put; auto; try discriminate; intro E; injection E; lia.
Qed.

Lemma ggone_step s o g : grp_gone s g -> grp_gone (fst (step s o)) g.
Proof.
  intro G. pose proof G as [N C]. destruct o; cbn [step].
  - destruct k; try exact G; unfold reg_plain; destruct (pending s); try exact G;
    destruct (_ && _); cbn [fst]; exact G.
  - unfold reg_call. destruct (pending s); [|exact G]. destruct ids; [exact G|].
    destruct (negb _); [exact G|]. destruct (_ && _); exact G.
  - unfold reg_result. destruct (negb _); [exact G|].
    destruct (decide _ _ _ _) as [g' off]. cbn [fst]. wf_split; [|exact G].
    destruct (ggone_offload_all off s g G) as [N2 C2]. split; [cbn; lia|exact C2].
  - unfold act. destruct (resolve s AArchive us); cbn [fst]; [|exact G].
    wf_split; [|exact G]. exact (ggone_archive s l h stubs g G).
  - unfold act. destruct (resolve s ARestore us); cbn [fst]; [|exact G].
    wf_split; [|exact G]. exact (ggone_restore l s g G).
  - unfold act. destruct (resolve s ADelete us); cbn [fst]; [|exact G].
    wf_split; [|exact G]. exact (ggone_delete l s g G).
  - destruct (find_block s n); [destruct (recover s n)|]; exact G.
  - exact G.
Qed.

Lemma ggone_run s os g : grp_gone s g -> grp_gone (run s os) g.
Proof. revert s; induction os as [|o os IH]; intros s G; simpl; auto. apply IH, ggone_step, G. Qed.

(* ------------------------------------------------------------------ *)
(* Delete makes each selected unit gone *)

Lemma resolve_checked s a us l : resolve s a us = inl l -> forall u, In u l -> check_unit s a u = None.
Proof.
  unfold resolve. destruct us as [|u0 us0]; [discriminate|].
  destruct (first_error s a (u0 :: us0)) eqn:E; [discriminate|].
  intro H. injection H as El. subst l. intros u Hu.
  apply (first_error_none _ _ _ E).
  unfold sort_by, dedup in Hu. cbn [dedup_acc existsb fold_right] in Hu.
  apply in_insert_by in Hu. destruct Hu as [Hu|Hu]; [left; auto|right].
  apply in_sort_by in Hu. apply (in_dedup_acc [u0]); exact Hu.
Qed.

Lemma prot_same s s' b : owner s' = owner s -> pending s' = pending s -> protected s' b = protected s b.
Proof. intros O P. unfold protected. rewrite O, P. reflexivity. Qed.

Definition unprot (s : state) (n : nat) : Prop :=
  forall b, In b (blocks s) -> b_id b = n -> protected s b = false.

Lemma unprot_delete_unit s u n : unprot s n -> unprot (delete_unit s u) n.
Proof.
  intros P b' Hb' E. destruct u as [m|g]; unfold delete_unit in *; cbv zeta in *;
  destruct (blocks_update_in s _ b' Hb') as [b [Hb [[Pb ->]|[Pb ->]]]];
  try (rewrite (P b Hb E) in Pb; discriminate);
  match goal with |- protected _ (if ?c then _ else _) = false => destruct c end;
  try reflexivity; rewrite (prot_same s) by reflexivity; exact (P b Hb E).
Qed.

Lemma delete_ub_gone s n : unprot s n -> 1 <= n <= nblocks s -> blk_gone (delete_unit s (UB n)) n.
Proof.
  intros P N. unfold delete_unit; cbv zeta. split; [exact N|split; [|apply clean_remove_self]].
  intros b' Hb' E. destruct (blocks_update_in s _ b' Hb') as [b [Hb [[Pb ->]|[Pb ->]]]].
  - rewrite (P b Hb E) in Pb. discriminate.
  - destruct (Nat.eqb_spec (b_id b) n) as [En|En]; [split; reflexivity|]. exfalso. exact (En E).
Qed.

Lemma nblocks_delete_unit s u : nblocks (delete_unit s u) = nblocks s.
Proof. destruct u; reflexivity. Qed.

Lemma fold_ub l s n :
  unprot s n -> 1 <= n <= nblocks s -> In (UB n) l -> blk_gone (fold_left delete_unit l s) n.
Proof.
  revert s. induction l as [|u l IH]; intros s P N H; [destruct H|]. simpl.
  destruct H as [ ->|H].
  - apply gone_delete, delete_ub_gone; auto.
  - apply IH; auto; [apply unprot_delete_unit, P | rewrite nblocks_delete_unit; exact N].
Qed.

Definition top_in (s : state) (g : nat) : Prop :=
  exists x, In x (groups s) /\ g_id x = g /\ g_parent x = None.

Lemma climb_top gs f x : g_parent x = None -> climb gs f x = x.
Proof. intro P. destruct f; simpl; [reflexivity|]. rewrite P. reflexivity. Qed.

Lemma delete_ug_gone s g : top_in s g -> g <= ngroups s -> grp_gone (delete_unit s (UG g)) g.
Proof.
  intros [x [Hx [Ex Px]]] N. unfold delete_unit; cbv zeta. split; [exact N|].
  intros kv H E. apply filter_In in H. destruct H as [_ P]. rewrite E in P.
  apply negb_true_iff in P. revert P. apply not_false_iff_true. apply existsb_exists.
  exists x. split; [exact Hx|]. apply andb_true_iff. split; [apply Nat.eqb_eq; exact Ex|].
  unfold under. rewrite climb_top by exact Px. apply Nat.eqb_eq; exact Ex.
Qed.

Lemma top_delete_unit s u g : top_in s g -> u <> UG g -> top_in (delete_unit s u) g.
Proof.
  intros [x [Hx [Ex Px]]] U. destruct u as [m|g']; unfold delete_unit; cbv zeta.
  - exists x. auto.
  - exists x. split; [|auto]. cbn [groups with_store with_groups]. apply filter_In. split; [exact Hx|].
    unfold under. rewrite climb_top by exact Px. apply negb_true_iff, Nat.eqb_neq.
    intro E. apply U. congruence.
Qed.

Lemma ngroups_delete_unit s u : ngroups (delete_unit s u) = ngroups s.
Proof. destruct u; reflexivity. Qed.

Lemma fold_ug l s g :
  top_in s g -> g <= ngroups s -> In (UG g) l -> grp_gone (fold_left delete_unit l s) g.
Proof.
  revert s. induction l as [|u l IH]; intros s T N H; [destruct H|]. simpl.
  destruct (uid_eqb u (UG g)) eqn:U.
  - apply uid_eqb_eq in U. subst u. apply ggone_delete, delete_ug_gone; auto.
  - destruct H as [ ->|H]; [cbn in U; rewrite Nat.eqb_refl in U; discriminate|].
    apply IH; auto; [|rewrite ngroups_delete_unit; exact N].
    apply top_delete_unit; auto. intro E. subst u. cbn in U. rewrite Nat.eqb_refl in U. discriminate.
Qed.

Lemma ids_range s b : ids_ok s -> In b (blocks s) -> 1 <= b_id b <= nblocks s.
Proof.
  unfold ids_ok. intros I H. assert (M : In (b_id b) (map b_id (blocks s))) by (apply in_map; exact H).
  rewrite I in M. apply in_seq in M. lia.
Qed.

Definition unit_gone (s : state) (u : uid) : Prop :=
  match u with UB n => blk_gone s n | UG g => grp_gone s g end.

Lemma delete_gone s us dm :
  ids_ok s -> gids_ok s -> r_ok (snd (step s (ODelete us dm))) = None ->
  forall u, In u us -> unit_gone (fst (step s (ODelete us dm))) u.
Proof.
  intros I Gi. cbn [step]. unfold act.
  destruct (resolve s ADelete us) as [l|e] eqn:R; cbn [snd r_ok refuse]; [|discriminate].
  wf_split; cbn [snd r_ok refuse]; [|discriminate].
  intros _ u Hu. cbn [fst]. destruct (resolve_sel _ _ _ _ R) as [_ Inc].
  pose proof (resolve_checked _ _ _ _ R u (Inc u Hu)) as Ck. specialize (Inc u Hu).
  destruct u as [n|g]; unfold check_unit in Ck; cbn [unit_gone].
  - destruct (find_block s n) as [b|] eqn:F; [|discriminate].
    destruct (find_block_in s n b F) as [Hb Eb].
    assert (P : protected s b = false).
    { destruct (b_status b); try discriminate; destruct (b_group b); try discriminate;
      destruct (protected s b); try discriminate; reflexivity. }
    assert (U : unprot s n).
    { intros b' Hb' E'. replace b' with b; [exact P|].
      pose proof (find_block_unique s b' I Hb') as F'. rewrite E', F in F'. congruence. }
    pose proof (ids_range s b I Hb) as N. rewrite Eb in N.
    exact (fold_ub l s n U N Inc).
  - destruct (find_group s g) as [x|] eqn:F; [|discriminate].
    destruct (g_parent x) eqn:Px; [discriminate|].
    apply find_some in F. destruct F as [Hx Ex]. apply Nat.eqb_eq in Ex.
    assert (T : top_in s g) by (exists x; auto).
    assert (N : g <= ngroups s) by (rewrite <- Ex; apply Gi, Hx).
    exact (fold_ug l s g T N Inc).
Qed.

Lemma unit_gone_run s os u : unit_gone s u -> unit_gone (run s os) u.
Proof. destruct u; [apply gone_run | apply ggone_run]. Qed.

Lemma reached_ok c d s0 ops : init c d = Some s0 -> ids_ok (run s0 ops) /\ gids_ok (run s0 ops).
Proof.
  intro I. destruct (init_fresh c d s0 I) as [I1 I2]. split.
  - apply run_invariant; auto. intros s o H. apply (stable_step s o H).
  - apply run_invariant; auto. intros s o H. apply gids_step, H.
Qed.

Lemma gone_facts s n :
  ids_ok s -> blk_gone s n ->
  sp_lookup (KB n) (store s) = None /\ sp_deleted s n = true /\ recover s n = None.
Proof.
  intros I [N [D C]]. split; [|split].
  - rewrite sp_lookup_eq. destruct (lookup (KB n) (store s)) eqn:L; [|reflexivity].
    apply lookup_in in L. exfalso. exact (C _ L eq_refl).
  - unfold sp_deleted, sp_block. rewrite sp_blocks_eq.
    assert (M : In n (map b_id (blocks s))) by (rewrite I; apply in_seq; lia).
    apply in_map_iff in M. destruct M as [b0 [E0 H0]].
    destruct (find (fun b => b_id b =? n) (blocks s)) as [b|] eqn:F.
    + apply find_some in F. destruct F as [Hb Eb]. apply Nat.eqb_eq in Eb.
      rewrite (proj1 (D b Hb Eb)). reflexivity.
    + eapply find_none in F; [|exact H0]. rewrite E0, Nat.eqb_refl in F. discriminate.
  - unfold recover. destruct (find_block s n) as [b|] eqn:F; [|reflexivity].
    destruct (find_block_in s n b F) as [Hb Eb]. rewrite (proj1 (D b Hb Eb)). reflexivity.
Qed.

Lemma ggone_facts s g : grp_gone s g -> sp_lookup (KG g) (store s) = None.
Proof.
  intros [_ C]. rewrite sp_lookup_eq. destruct (lookup (KG g) (store s)) eqn:L; [|reflexivity].
  apply lookup_in in L. exfalso. exact (C _ L eq_refl).
Qed.

Theorem deletion_run (c : config) (d : nat) (s0 : state) (ops : list op) (us : list uid) (dm : nat)
    (later : list op) :
  init c d = Some s0 ->
  let s := run s0 ops in
  r_ok (snd (step s (ODelete us dm))) = None ->
  let s' := run (fst (step s (ODelete us dm))) later in
  forall u, In u us ->
  sp_lookup (sp_key_of u) (store s') = None /\
  (forall n, u = UB n -> sp_deleted s' n = true /\ recover s' n = None).
Proof.
  intros Init s Ok s' u Hu.
  destruct (reached_ok c d s0 ops Init) as [I Gi].
  pose proof (unit_gone_run _ later u (delete_gone s us dm I Gi Ok u Hu)) as G.
  assert (I' : ids_ok s').
  { unfold s'. apply run_invariant; [exact (proj1 (stable_step s _ I))|].
    intros t o H. exact (proj1 (stable_step t o H)). }
  destruct u as [n|g]; cbn [sp_key_of unit_gone] in *.
  - destruct (gone_facts s' n I' G) as [A [B C]]. split; [exact A|].
    intros m E. injection E as <-. auto.
  - split; [exact (ggone_facts s' g G)|]. intros m E. discriminate.
Qed.
