(* The Anthropic Messages rules (alternating user/assistant turns, each
   assistant turn's tool_use blocks answered by the tool_result blocks that
   lead the next user turn), proved for every rendering of the engine model
   from the OpenAI pairing rule (Theorems.v). *)

From Coq Require Import List Arith Bool Lia PeanoNat Permutation FinFun.
Import ListNotations.
From VistaLabEngine Require Import Model Theorems.
From VistaLabEngine Require Export Protocol.


Lemma perm_eqb_complete a b : Permutation a b -> perm_eqb a b = true.
Proof.
  revert b. induction a as [|x a IH]; intros b P; simpl.
  - apply Permutation_nil in P. subst. reflexivity.
  - assert (In x b) by (apply (Permutation_in x P); left; auto).
    assert (E : existsb (Nat.eqb x) b = true)
      by (apply existsb_exists; exists x; split; auto; apply Nat.eqb_refl).
    rewrite E. simpl. apply IH. apply Permutation_cons_inv with x.
    rewrite P. apply remove_first_perm; auto.
Qed.

Lemma perm_eqb_sound a b : perm_eqb a b = true -> Permutation a b.
Proof.
  revert b. induction a as [|x a IH]; intros b P; simpl in P.
  - destruct b; [auto|discriminate].
  - apply andb_true_iff in P. destruct P as [E P].
    apply existsb_exists in E. destruct E as [y [Hy Ey]]. apply Nat.eqb_eq in Ey. subst y.
    rewrite (remove_first_perm x b Hy). apply perm_skip. apply IH; auto.
Qed.

Lemma single_perm i open : In i open -> remove_first i open = [] -> Permutation open [i].
Proof. intros H E. rewrite (remove_first_perm i open H), E. reflexivity. Qed.

Lemma project_pairs open rs : openai_ok open rs = true -> pairs_ok open (project rs) = true.
Proof.
  revert open. induction rs as [|r rest IH]; intros open H; simpl in *; auto.
  destruct r as [| | |ids|i].
  - (* RSystem *) destruct open; [|discriminate]. specialize (IH [] H).
    destruct (project rest) as [|t' ts]; simpl; auto.
    destruct (a_user t') eqn:U; simpl in *; try rewrite U in IH; try rewrite U; simpl in *; auto.
  - (* RUser *) destruct open; [|discriminate]. specialize (IH [] H).
    destruct (project rest) as [|t' ts]; simpl; auto.
    destruct (a_user t') eqn:U; simpl in *; try rewrite U in IH; try rewrite U; simpl in *; auto.
  - (* RAssistant *) destruct open; [|discriminate]. specialize (IH [] H).
    destruct (project rest) as [|t' ts]; simpl; auto.
    destruct (a_user t') eqn:U; simpl in *; try rewrite U in IH; try rewrite U; simpl in *; auto.
  - (* RCalls *) destruct open; [|discriminate]. destruct ids as [|i0 ids]; [discriminate|].
    apply andb_true_iff in H. destruct H as [N H]. specialize (IH _ H).
    destruct (project rest) as [|t' ts]; simpl in *; [discriminate|].
    destruct (a_user t') eqn:U; simpl in *; try rewrite U in IH; try rewrite U; simpl in *;
      [rewrite N; auto|discriminate].
  - (* RTool *) apply andb_true_iff in H. destruct H as [E H].
    apply existsb_exists in E. destruct E as [y [Hy Ey]]. apply Nat.eqb_eq in Ey. subst y.
    specialize (IH _ H).
    destruct (project rest) as [|t' ts]; simpl in *.
    + destruct (remove_first i open) eqn:R; [|discriminate].
      rewrite (perm_eqb_complete _ _ (single_perm i open Hy R)). reflexivity.
    + destruct (a_user t') eqn:U; simpl in *.
      * apply andb_true_iff in IH. destruct IH as [P IH]. rewrite IH, andb_true_r.
        apply perm_eqb_complete. rewrite (remove_first_perm i open Hy).
        apply perm_skip. apply perm_eqb_sound; auto.
      * destruct (remove_first i open) eqn:R; [|discriminate].
        rewrite (perm_eqb_complete _ _ (single_perm i open Hy R)). simpl. rewrite U. exact IH.
Qed.

Lemma alternates_head x x' ts : a_user x = a_user x' -> alternates (x :: ts) = alternates (x' :: ts).
Proof. intro E. destruct ts; simpl; auto. rewrite E. reflexivity. Qed.

Lemma project_alternates rs : alternates (project rs) = true.
Proof.
  induction rs as [|r rest IH]; simpl; auto.
  destruct (project rest) as [|t' ts]; auto.
  destruct (Bool.eqb (a_user (turn_of r)) (a_user t')) eqn:E.
  - rewrite (alternates_head _ t'); auto. apply Bool.eqb_prop in E. exact E.
  - simpl. rewrite E. simpl. exact IH.
Qed.

Lemma drop_system_ok rs : openai_ok [] rs = true -> openai_ok [] (drop_system rs) = true.
Proof. induction rs as [|r rs IH]; simpl; auto. destruct r; auto. Qed.

(* A user turn has no tool_use blocks, an assistant turn no tool_result blocks. *)
Definition sided (t : aturn) : Prop :=
  if a_user t then a_uses t = [] else a_results t = [].

Lemma project_sided rs : Forall sided (project rs).
Proof.
  induction rs as [|r rest IH]; simpl; auto.
  assert (T : sided (turn_of r)) by (destruct r; reflexivity).
  destruct (project rest) as [|t' ts]; [constructor; auto|].
  inversion IH as [|? ? St' Sts]; subst.
  destruct (Bool.eqb (a_user (turn_of r)) (a_user t')) eqn:E; [|constructor; auto].
  apply Bool.eqb_prop in E. constructor; auto.
  unfold sided in *; simpl. rewrite <- E in St'.
  destruct (a_user (turn_of r)); rewrite T, St'; reflexivity.
Qed.

Lemma request_sided rs : Forall sided (anthropic_request rs).
Proof.
  unfold anthropic_request. pose proof (project_sided (drop_system rs)) as S.
  destruct (project (drop_system rs)) as [|t ts]; auto.
  destruct (a_user t); auto. constructor; [reflexivity | exact S].
Qed.

Lemma tag_pairs ts : forall prev k,
  pairs_ok prev ts = true -> wire_pairs (map (at_turn k) prev) (tag k ts).
Proof.
  induction ts as [|t r IH]; intros prev k H; simpl in *.
  - destruct prev; [reflexivity | discriminate].
  - destruct (a_user t) eqn:U.
    + apply andb_true_iff in H. destruct H as [P H]. split.
      * apply Permutation_map, perm_eqb_sound; exact P.
      * exact (IH [] k H).
    + destruct prev; [|discriminate]. apply andb_true_iff in H. destruct H as [_ H].
      split; [reflexivity | exact (IH _ (S k) H)].
Qed.

Lemma NoDup_app_disjoint {A} (l l' : list A) :
  NoDup l -> NoDup l' -> (forall x, In x l -> ~ In x l') -> NoDup (l ++ l').
Proof.
  induction l as [|a l IH]; intros N N' D; simpl; auto.
  inversion N; subst. constructor.
  - intro I. apply in_app_or in I. destruct I as [I|I]; [contradiction|].
    exact (D a (or_introl eq_refl) I).
  - apply IH; auto. intros x Ix. apply D. right. exact Ix.
Qed.

Lemma tag_unique ts : forall prev k,
  pairs_ok prev ts = true -> Forall sided ts ->
  NoDup (flat_map w_uses (tag k ts)) /\ Forall (fun x => k < snd x) (flat_map w_uses (tag k ts)).
Proof.
  induction ts as [|t r IH]; intros prev k H Sd; simpl in *; [split; constructor|].
  inversion Sd as [|? ? St Sr]; subst. unfold sided in St.
  destruct (a_user t) eqn:U; simpl.
  - rewrite St. simpl. apply andb_true_iff in H. destruct H as [_ H].
    exact (IH [] k H Sr).
  - destruct prev; [|discriminate]. apply andb_true_iff in H. destruct H as [N H].
    destruct (IH _ (S k) H Sr) as [Nr Fr].
    apply nodupb_NoDup in N. split.
    + apply NoDup_app_disjoint; auto.
      * apply FinFun.Injective_map_NoDup; auto.
        intros x y E. unfold at_turn in E. inversion E. reflexivity.
      * intros x Ix Ir. apply in_map_iff in Ix. destruct Ix as [i [<- _]].
        rewrite Forall_forall in Fr. specialize (Fr _ Ir). simpl in Fr. lia.
    + apply Forall_app. split.
      * apply Forall_forall. intros x Ix. apply in_map_iff in Ix.
        destruct Ix as [i [<- _]]. simpl. lia.
      * rewrite Forall_forall in *. intros x Ix. specialize (Fr x Ix). lia.
Qed.

Lemma anthropic_of_openai ms : openai_valid ms -> anthropic_valid ms.
Proof.
  unfold openai_valid, anthropic_valid, anthropic_wire. intro H.
  assert (W : pairs_ok [] (anthropic_request (map m_role ms)) = true /\
              alternates (anthropic_request (map m_role ms)) = true /\
              match anthropic_request (map m_role ms) with
              | t :: _ => a_user t = true | [] => True end).
  { unfold anthropic_request.
    apply drop_system_ok in H. pose proof (project_pairs [] _ H) as P.
    pose proof (project_alternates (drop_system (map m_role ms))) as A.
    destruct (project (drop_system (map m_role ms))) as [|t ts]; auto.
    destruct (a_user t) eqn:U.
    - auto.
    - simpl in *. rewrite U in *. simpl. auto. }
  destruct W as [P [A F]]. repeat split; auto.
  - exact (tag_pairs _ [] 0 P).
  - exact (proj1 (tag_unique _ [] 0 P (request_sided _))).
Qed.

Lemma render_anthropic s : proto_inv s -> anthropic_valid (render s).
Proof. intro H. apply anthropic_of_openai, render_valid; exact H. Qed.
