(* Lemma 1 of the paper (Fano, list-decoding form), for every n, every list
   size 1 <= m <= n - 1, every finite observation type Y and every private
   randomness U independent of (J*, Y). *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop finfun.
From VistaLab Require Import Entropy.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

(* ------------------------------------------------------------------ *)
(* Pointwise bound: for any law q and any set L with 0 < |L| < |T|,
   H(q) <= 1 + q(L) log2 |L| + (1 - q(L)) log2 (|T| - |L|).
   Gibbs against the reference 1/(2|L|) on L and 1/(2(|T|-|L|)) off L. *)

Section Pointwise.
Variable T : finType.

Lemma H_list_bound (q : T -> R) (L : {set T}) :
  is_dist q -> (0 < #|L|)%N -> (#|L| < #|T|)%N ->
  H q <= 1 + (\sum_(i in L) q i) * log2 (INR #|L|)
           + (1 - \sum_(i in L) q i) * log2 (INR (#|T| - #|L|)).
Proof.
move=> d Lpos Llt.
have cC : #|~: L| = (#|T| - #|L|)%N by rewrite -(cardsC L) addKn.
have Cpos : (0 < #|~: L|)%N by rewrite cC subn_gt0.
set m := INR #|L|; set k := INR #|~: L|.
have mp : 0 < m by apply: lt_0_INR; apply/ltP.
have kp : 0 < k by apply: lt_0_INR; apply/ltP.
rewrite -cC -/k.
pose r i := if i \in L then / (2 * m) else / (2 * k).
have rp : forall i, 0 < r i.
  by move=> i; rewrite /r; case: ifP => _; apply: Rinv_0_lt_compat; lra.
have pC : \sum_(i in ~: L) q i = 1 - \sum_(i in L) q i.
  by have := sumR_setC L q; rewrite d.2; lra.
apply: (Rle_trans _ (crossH q r)).
  apply: gibbs => //; first by move=> i; exact: Rlt_le.
  rewrite (sumR_setC L).
  rewrite (eq_bigr (fun _ => / (2 * m))); last by move=> i iL; rewrite /r iL.
  rewrite [X in _ + X](eq_bigr (fun _ => / (2 * k))); last first.
    by move=> i; rewrite in_setC /r => /negbTE ->.
  rewrite !sumR_const -/m -/k; apply: Req_le; field; lra.
rewrite /crossH (sumR_setC L).
rewrite (eq_bigr (fun i => q i * - log2 (2 * m))); last first.
  by move=> i iL; rewrite /r iL log2_inv //; lra.
rewrite [X in _ + X](eq_bigr (fun i => q i * - log2 (2 * k))); last first.
  by move=> i; rewrite in_setC /r => /negbTE ->; rewrite log2_inv //; lra.
rewrite !sumR_scar pC !log2_mul ?log2_2; try lra; apply: Req_le; ring.

Qed.

End Pointwise.

(* ------------------------------------------------------------------ *)
(* Averaged form for an arbitrary joint law of (A, B) and a B-measurable
   list L(b) of constant size m. *)

Section Averaged.
Variables A B : finType.
Variable p : A -> B -> R.
Hypothesis pj : is_joint p.
Variable L : B -> {set A}.
Variable m : nat.
Hypothesis Lsize : forall b, #|L b| = m.
Hypothesis m_pos : (0 < m)%N.
Hypothesis m_lt : (m < #|A|)%N.

(* Probability that the first coordinate lies in the list. *)
Definition Pin := \sum_b \sum_(a in L b) p a b.

Lemma condH_list :
  condH p <= 1 + Pin * log2 (INR m) + (1 - Pin) * log2 (INR (#|A| - m)).
Proof.
pose f b := 1 + (\sum_(a in L b) post p b a) * log2 (INR m)
              + (1 - \sum_(a in L b) post p b a) * log2 (INR (#|A| - m)).
apply: (Rle_trans _ (\sum_b marg2 p b * f b)).
  apply: condH_le => // b mb; rewrite /f -(Lsize b).
  by apply: H_list_bound; [exact: post_dist | rewrite Lsize | rewrite Lsize].
have wp : forall b, marg2 p b * (\sum_(a in L b) post p b a) = \sum_(a in L b) p a b.
  by move=> b; rewrite -sumR_scal; apply: eq_bigr => a _; exact: marg2_post.
have -> : \sum_b marg2 p b * f b
   = \sum_b (marg2 p b * (1 + log2 (INR (#|A| - m)))
             + (\sum_(a in L b) p a b) * (log2 (INR m) - log2 (INR (#|A| - m)))).
  by apply: eq_bigr => b _; rewrite -wp /f; ring.
rewrite big_split /= !sumR_scar -/Pin sum_marg2 //; apply: Req_le; ring.
Qed.

End Averaged.

(* ------------------------------------------------------------------ *)
(* Independent private randomness changes nothing: H(J | Y, U) = H(J | Y). *)

Section Independent.
Variables A TY TU : finType.
Variable p : A -> TY -> R.
Variable pU : TU -> R.
Hypothesis pj : is_joint p.
Hypothesis pUd : is_dist pU.

(* Joint law of (J, (Y, U)) with U independent of (J, Y). *)
Definition indep_joint (a : A) (yu : TY * TU) := p a yu.1 * pU yu.2.

Lemma indep_joint_is_joint : is_joint indep_joint.
Proof.
split=> [a yu|]; first by apply: Rmult_le_pos; [exact: pj.1 | exact: pUd.1].
rewrite (eq_bigr (fun a => \sum_y \sum_u p a y * pU u)); last first.
  by move=> a _; rewrite sumR_pair.
rewrite (eq_bigr (fun a => \sum_y p a y)); last first.
  by move=> a _; apply: eq_bigr => y _; rewrite sumR_scal pUd.2; ring.
exact: pj.2.
Qed.

Lemma marg2_indep y u : marg2 indep_joint (y, u) = marg2 p y * pU u.
Proof. by rewrite /marg2 -sumR_scar. Qed.

Lemma condH_indep : condH indep_joint = condH p.
Proof.
rewrite /condH sumR_pair /=.
have e : forall y u, marg2 indep_joint (y, u) * H (post indep_joint (y, u))
                     = marg2 p y * H (post p y) * pU u.
  move=> y u; rewrite marg2_indep.
  case: (Req_dec (pU u) 0) => [->|nz]; first ring.
  have -> : H (post indep_joint (y, u)) = H (post p y).
    apply: H_ext => a; rewrite /post marg2_indep /indep_joint /=.
    case: (Req_dec (marg2 p y) 0) => [z|nz2].
      by rewrite z (marg2_eq0 a pj z) !Rmult_0_l /Rdiv !Rmult_0_l.
    by field.
  ring.
rewrite (eq_bigr (fun y => marg2 p y * H (post p y))) //.
move=> y _; rewrite (eq_bigr _ (fun u _ => e y u)) sumR_scal pUd.2; ring.
Qed.

Lemma marg1_indep a : marg1 indep_joint a = marg1 p a.
Proof.
rewrite /marg1 sumR_pair /=; apply: eq_bigr => y _.
by rewrite /indep_joint /= sumR_scal pUd.2; ring.
Qed.

Lemma MI_indep : MI indep_joint = MI p.
Proof. by rewrite /MI condH_indep (H_ext marg1_indep). Qed.

End Independent.

(* ------------------------------------------------------------------ *)
(* Lemma 1 (list Fano) in the paper's setting.                          *)

Section Lemma1.
Variable n : nat.
Variables TY TU : finType.
(* Joint law of (J*, Y); J* uniform on [n] = 'I_n. *)
Variable pJY : 'I_n -> TY -> R.
Hypothesis pJY_joint : is_joint pJY.
Hypothesis J_uniform : forall j, marg1 pJY j = / INR n.
(* Private randomness U, independent of (J*, Y). *)
Variable pU : TU -> R.
Hypothesis pU_dist : is_dist pU.
(* A (Y,U)-measurable list of size m, 1 <= m <= n - 1. *)
Variable L : TY -> TU -> {set 'I_n}.
Variable m : nat.
Hypothesis L_size : forall y u, #|L y u| = m.
Hypothesis m_ge1 : (1 <= m)%N.
Hypothesis m_lt_n : (m < n)%N.

(* Pc = Pr[J* in L(Y,U)]. *)
Definition Pc := \sum_j \sum_y \sum_u (if j \in L y u then pJY j y * pU u else 0).

Lemma H_J_uniform : H (marg1 pJY) = log2 (INR n).
Proof.
have n0 : (0 < #|'I_n|)%N by rewrite card_ord; case: (n) m_lt_n m_ge1 => // _ /ltn_trans; apply.
rewrite (H_ext (q' := fun _ => / INR #|'I_n|)); last by move=> j; rewrite J_uniform card_ord.
by rewrite H_uniform // card_ord.
Qed.

Lemma Pc_Pin : Pc = Pin (indep_joint pJY pU) (fun yu => L yu.1 yu.2).
Proof.
rewrite /Pc /Pin (exchange_big) /= sumR_pair /=.
apply: eq_bigr => y _; rewrite exchange_big; apply: eq_bigr => u _.
by rewrite [in RHS]big_mkcond.
Qed.

Theorem list_fano :
  log2 (INR n) - MI pJY <= 1 + Pc * log2 (INR m) + (1 - Pc) * log2 (INR (n - m)).
Proof.
have -> : log2 (INR n) - MI pJY = condH (indep_joint pJY pU).
  by rewrite condH_indep // /MI H_J_uniform; ring.
rewrite Pc_Pin -[in X in INR (X - m)](card_ord n).
apply: condH_list.
- exact: indep_joint_is_joint.
- by move=> [y u]; exact: L_size.
- done.
- by rewrite card_ord.
Qed.

End Lemma1.
