(* Minimal finite information theory over Coq's real numbers.

   Distributions are nonnegative real functions on a finType summing to 1;
   sums are mathcomp bigops over Rplus.  Entropy is in bits,
   log2 x = ln x / ln 2, and Coq's ln satisfies ln 0 = 0, so the term
   q * log2 q vanishes at q = 0 with no case split.  Joint laws of a pair
   (A, B) are curried functions p : A -> B -> R. *)

From Coq Require Import Reals Lra.
From mathcomp Require Import ssreflect ssrfun ssrbool eqtype ssrnat seq.
From mathcomp Require Import fintype finset bigop finfun.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Local Open Scope R_scope.

Lemma RplusA : associative Rplus.
Proof. by move=> x y z; rewrite Rplus_assoc. Qed.
Lemma RmultA : associative Rmult.
Proof. by move=> x y z; rewrite Rmult_assoc. Qed.

Canonical Rplus_monoid := @Monoid.Law R 0 Rplus RplusA Rplus_0_l Rplus_0_r.
Canonical Rplus_comoid := @Monoid.ComLaw R 0 Rplus_monoid Rplus_comm.
Canonical Rmult_monoid := @Monoid.Law R 1 Rmult RmultA Rmult_1_l Rmult_1_r.
Canonical Rmult_comoid := @Monoid.ComLaw R 1 Rmult_monoid Rmult_comm.
Canonical Rmult_muloid := @Monoid.MulLaw R 0 Rmult Rmult_0_l Rmult_0_r.
Canonical Rplus_addoid :=
  @Monoid.AddLaw R 0 Rmult Rplus_comoid Rmult_plus_distr_r Rmult_plus_distr_l.

Notation "\sum_ ( i 'in' A ) F" := (\big[Rplus/0%R]_(i in A) F%R) : R_scope.
Notation "\sum_ ( i : t ) F" := (\big[Rplus/0%R]_(i : t) F%R) : R_scope.
Notation "\sum_ ( i | P ) F" := (\big[Rplus/0%R]_(i | P) F%R) : R_scope.
Notation "\sum_ ( i : t | P ) F" := (\big[Rplus/0%R]_(i : t | P) F%R) : R_scope.
Notation "\sum_ ( i < n ) F" := (\big[Rplus/0%R]_(i < n) F%R) : R_scope.
Notation "\sum_ ( m <= i < n ) F" := (\big[Rplus/0%R]_(m <= i < n) F%R) : R_scope.
Notation "\sum_ i F" := (\big[Rplus/0%R]_i F%R) : R_scope.

(* ------------------------------------------------------------------ *)
(* Sums of reals                                                        *)

Section RSums.
Variable I : finType.
Implicit Types (P : pred I) (F G : I -> R).

Lemma sumR_ge0 P F : (forall i, P i -> 0 <= F i) -> 0 <= \sum_(i | P i) F i.
Proof.
move=> h; apply: (big_ind (fun x => 0 <= x)) => //; first lra.
by move=> x y; lra.
Qed.

Lemma leR_sum P F G : (forall i, P i -> F i <= G i) ->
  \sum_(i | P i) F i <= \sum_(i | P i) G i.
Proof.
move=> h; apply: (big_ind2 (fun x y => x <= y)) => //; first lra.
by move=> ? ? ? ?; lra.
Qed.

Lemma sumR_const (A : pred I) c : \sum_(i in A) c = INR #|A| * c.
Proof.
rewrite big_const; elim: #|A| => [|k IH]; first by rewrite /= Rmult_0_l.
rewrite S_INR iterS IH; ring.

Qed.

Lemma sumR_constT c : \sum_(i : I) c = INR #|I| * c.
Proof. by rewrite sumR_const; congr (INR _ * _); apply: eq_card. Qed.

Lemma sumR_scal P F c : \sum_(i | P i) (c * F i) = c * \sum_(i | P i) F i.
Proof. by rewrite big_distrr. Qed.

Lemma sumR_scar P F c : \sum_(i | P i) (F i * c) = (\sum_(i | P i) F i) * c.
Proof. by rewrite big_distrl. Qed.

Lemma sumR_sub P F G :
  \sum_(i | P i) (F i - G i) = \sum_(i | P i) F i - \sum_(i | P i) G i.
Proof.
rewrite /Rminus big_split /=; congr (_ + _).
rewrite (big_morph Ropp (id1 := 0) (op1 := Rplus)) //; first by move=> x y; lra.
lra.
Qed.

Lemma sumR_opp P F : \sum_(i | P i) (- F i) = - \sum_(i | P i) F i.
Proof.
rewrite (big_morph Ropp (id1 := 0) (op1 := Rplus)) //; first by move=> x y; lra.
lra.
Qed.

Lemma leR_sum_term F i : (forall j, 0 <= F j) -> F i <= \sum_j F j.
Proof.
move=> h; rewrite (bigD1 i) //=.
have := @sumR_ge0 (fun j => j != i) F (fun j _ => h j); lra.
Qed.

Lemma sumR_eq0 F i : (forall j, 0 <= F j) -> \sum_j F j = 0 -> F i = 0.
Proof.
move=> h s; have := leR_sum_term i h; have := h i; lra.
Qed.

Lemma sumR_mkcond P F : \sum_(i | P i) F i = \sum_i (if P i then F i else 0).
Proof. by rewrite big_mkcond. Qed.

Lemma sumR_setC (A : {set I}) F :
  \sum_i F i = \sum_(i in A) F i + \sum_(i in ~: A) F i.
Proof.
rewrite (bigID (mem A)) /=; congr (_ + _); apply: eq_bigl => i //.
by rewrite in_setC.
Qed.

End RSums.

Lemma INR_sum (I : finType) (P : pred I) (F : I -> nat) :
  INR (\sum_(i | P i) F i)%N = \sum_(i | P i) INR (F i).
Proof.
by rewrite (big_morph INR (id1 := 0) (op1 := Rplus)) //; move=> x y; rewrite plus_INR.
Qed.

Lemma sumR_pair (I J : finType) (F : I * J -> R) :
  \sum_(p : I * J) F p = \sum_(i : I) \sum_(j : J) F (i, j).
Proof. by rewrite pair_bigA; apply: eq_bigr => -[]. Qed.

Lemma sumR_delta (T : finType) (i : T) (c : R) :
  \sum_(j : T) (if j == i then c else 0) = c.
Proof. by rewrite (bigD1 i) //= eqxx big1 ?Rplus_0_r // => j /negbTE ->. Qed.

Lemma sumR_delta' (T : finType) (i : T) (c : R) :
  \sum_(j : T) (if i == j then c else 0) = c.
Proof.
by rewrite -[RHS](sumR_delta i); apply: eq_bigr => j _; rewrite eq_sym.
Qed.

Lemma INR_b2n (b : bool) : INR (nat_of_bool b) = if b then 1 else 0.
Proof. by case: b. Qed.

(* ------------------------------------------------------------------ *)
(* Logarithms                                                          *)

Definition log2 (x : R) : R := ln x / ln 2.

Lemma ln2_pos : 0 < ln 2.
Proof. have := ln_lt_2; lra. Qed.

Lemma ln_le_sub1 x : 0 < x -> ln x <= x - 1.
Proof. move=> x0; have := exp_ineq1_le (ln x); rewrite exp_ln //; lra. Qed.

Lemma ln_div' x y : 0 < x -> 0 < y -> ln (x / y) = ln x - ln y.
Proof.
move=> ? ?; rewrite /Rdiv ln_mult ?ln_Rinv //; try ring; exact: Rinv_0_lt_compat.
Qed.

Lemma log2_mul x y : 0 < x -> 0 < y -> log2 (x * y) = log2 x + log2 y.
Proof. by move=> ? ?; rewrite /log2 ln_mult //; field; have := ln2_pos; lra. Qed.

Lemma log2_inv x : 0 < x -> log2 (/ x) = - log2 x.
Proof. by move=> ?; rewrite /log2 ln_Rinv //; field; have := ln2_pos; lra. Qed.

Lemma log2_div x y : 0 < x -> 0 < y -> log2 (x / y) = log2 x - log2 y.
Proof.
move=> ? ?; rewrite /Rdiv log2_mul ?log2_inv //; try lra; by apply: Rinv_0_lt_compat.
Qed.

Lemma log2_1 : log2 1 = 0.
Proof. by rewrite /log2 ln_1 /Rdiv Rmult_0_l. Qed.

Lemma log2_2 : log2 2 = 1.
Proof. rewrite /log2; field; have := ln2_pos; lra. Qed.

Lemma log2_le x y : 0 < x -> x <= y -> log2 x <= log2 y.
Proof.
move=> x0 xy; rewrite /log2 /Rdiv; apply: Rmult_le_compat_r.
  by apply: Rlt_le; apply: Rinv_0_lt_compat; exact: ln2_pos.
case: (Req_dec x y) => [->|ne]; first lra.
by apply: Rlt_le; apply: ln_increasing => //; lra.
Qed.

Lemma log2_lt x y : 0 < x -> x < y -> log2 x < log2 y.
Proof.
move=> x0 xy; rewrite /log2 /Rdiv; apply: Rmult_lt_compat_r.
  by apply: Rinv_0_lt_compat; exact: ln2_pos.
exact: ln_increasing.
Qed.

Lemma log2_le0 x : 0 <= x <= 1 -> log2 x <= 0.
Proof.
move=> [x0 x1]; case: (Req_dec x 0) => [->|nz].
  by rewrite /log2 /ln; case: Rlt_dec => [/Rlt_irrefl//|_]; lra.
by rewrite -log2_1; apply: log2_le => //; lra.
Qed.

Lemma log2_ln x : log2 x * ln 2 = ln x.
Proof. rewrite /log2; field; have := ln2_pos; lra. Qed.

(* ------------------------------------------------------------------ *)
(* Distributions and entropy                                           *)

Section Entropy.
Variable T : finType.
Implicit Types q r : T -> R.

(* Shannon entropy in bits. *)
Definition H q : R := - \sum_i q i * log2 (q i).

Lemma H_ext q q' : (forall i, q i = q' i) -> H q = H q'.
Proof. by move=> e; congr (- _); apply: eq_bigr => i _; rewrite e. Qed.

Definition is_dist q := (forall i, 0 <= q i) /\ \sum_i q i = 1.


(* Cross entropy: the "Gibbs reference" side. *)
Definition crossH q r : R := - \sum_i q i * log2 (r i).

Lemma dist_le1 q i : is_dist q -> q i <= 1.
Proof. by case=> h s; rewrite -s; apply: leR_sum_term. Qed.

Lemma H_ge0 q : is_dist q -> 0 <= H q.
Proof.
move=> d; rewrite /H -sumR_opp; apply: sumR_ge0 => i _.
have q0 := d.1 i; have q1 := dist_le1 i d.
have := log2_le0 (conj q0 q1) => l.
have := Rmult_le_compat_l _ _ _ q0 l; lra.
Qed.

(* Pointwise core of Gibbs' inequality, in nats. *)
Lemma gibbs_term a b : 0 <= a -> 0 <= b -> (0 < a -> 0 < b) ->
  a * (ln b - ln a) <= b - a.
Proof.
move=> a0 b0 ab; case: (Req_dec a 0) => [->|nz]; first lra.
have ap : 0 < a by lra.
have bp := ab ap.
have e : ln b - ln a = ln (b / a).
  rewrite /Rdiv ln_mult ?ln_Rinv //; try lra; by apply: Rinv_0_lt_compat.
rewrite e; have := ln_le_sub1 (Rdiv_lt_0_compat _ _ bp ap) => l.
have := Rmult_le_compat_l _ _ _ a0 l.
have -> : a * (b / a - 1) = b - a by field; lra.
done.
Qed.

(* Gibbs' inequality: H(q) <= cross entropy against any sub-probability
   reference r whose support contains that of q. *)
Lemma gibbs q r : is_dist q -> (forall i, 0 <= r i) ->
  (forall i, 0 < q i -> 0 < r i) -> \sum_i r i <= 1 -> H q <= crossH q r.
Proof.
move=> [q0 q1] r0 qr r1.
have key : \sum_i q i * (ln (r i) - ln (q i)) <= 0.
  apply: (Rle_trans _ (\sum_i (r i - q i))).
    by apply: leR_sum => i _; apply: gibbs_term; [exact: q0 | exact: r0 | exact: qr].
  by rewrite sumR_sub q1; lra.
have -> : H q = crossH q r - \sum_i (q i * log2 (q i) - q i * log2 (r i)).
  by rewrite sumR_sub /crossH /H; ring.
have -> : \sum_i (q i * log2 (q i) - q i * log2 (r i))
          = - (\sum_i q i * (ln (r i) - ln (q i))) * / ln 2.
  rewrite -sumR_opp -sumR_scar; apply: eq_bigr => i _.
  by rewrite /log2; field; have := ln2_pos; lra.
have p := Rinv_0_lt_compat _ ln2_pos.
have : 0 <= - (\sum_i q i * (ln (r i) - ln (q i))) * / ln 2.
  by apply: Rmult_le_pos; lra.
lra.
Qed.

Lemma card_pos_of_dist q : is_dist q -> (0 < #|T|)%N.
Proof.
case=> _ s; case: (posnP #|T|) => // /card0_eq h.
by move: s; rewrite big_pred0 //; lra.
Qed.

(* H(q) <= log2 |T|. *)
Lemma H_le_log_card q : is_dist q -> H q <= log2 (INR #|T|).
Proof.
move=> d; have cp : 0 < INR #|T| by apply: lt_0_INR; apply/ltP; exact: card_pos_of_dist d.
apply: (Rle_trans _ (crossH q (fun _ => / INR #|T|))).
  apply: gibbs => //.
  - by move=> _; apply: Rlt_le; apply: Rinv_0_lt_compat.
  - by move=> _ _; apply: Rinv_0_lt_compat.
  - rewrite sumR_constT Rinv_r; lra.
rewrite /crossH log2_inv // -sumR_opp.
  have -> : \sum_i - (q i * - log2 (INR #|T|)) = \sum_i q i * log2 (INR #|T|).
    by apply: eq_bigr => i _; ring.
  rewrite sumR_scar d.2; lra.
Qed.

End Entropy.

Lemma H_uniform (T : finType) : (0 < #|T|)%N ->
  H (fun _ : T => / INR #|T|) = log2 (INR #|T|).
Proof.
move=> cp; have cpR : 0 < INR #|T| by apply: lt_0_INR; apply/ltP.
rewrite /H log2_inv // sumR_constT; field; lra.
Qed.

(* ------------------------------------------------------------------ *)
(* Joint laws, conditional entropy, mutual information                 *)

Section Joint.
Variables A B : finType.
Implicit Types p : A -> B -> R.

Definition is_joint p := (forall a b, 0 <= p a b) /\ \sum_a \sum_b p a b = 1.

(* Marginals of the first and the second coordinate. *)
Definition marg1 p a := \sum_b p a b.
Definition marg2 p b := \sum_a p a b.

(* Conditional law of the first coordinate given the second = b. *)
Definition post p b a := p a b / marg2 p b.

(* H(A | B) = sum_b P(B = b) H(A | B = b). *)
Definition condH p := \sum_b marg2 p b * H (post p b).

(* I(A; B) = H(A) - H(A | B). *)
Definition MI p := H (marg1 p) - condH p.

Lemma marg2_ge0 p b : is_joint p -> 0 <= marg2 p b.
Proof. by case=> h _; apply: sumR_ge0 => a _. Qed.

Lemma sum_marg2 p : is_joint p -> \sum_b marg2 p b = 1.
Proof. by case=> _ s; rewrite /marg2 exchange_big. Qed.

Lemma sum_marg1 p : is_joint p -> \sum_a marg1 p a = 1.
Proof. by case. Qed.

Lemma marg1_dist p : is_joint p -> is_dist (marg1 p).
Proof. by move=> j; split=> [a|]; [apply: sumR_ge0 => b _; exact: j.1 | exact: j.2]. Qed.

Lemma marg2_dist p : is_joint p -> is_dist (marg2 p).
Proof. by move=> j; split=> [b|]; [exact: marg2_ge0 | exact: sum_marg2]. Qed.

Lemma marg2_eq0 p a b : is_joint p -> marg2 p b = 0 -> p a b = 0.
Proof. by case=> h _ m; apply: (sumR_eq0 (F := fun a => p a b)). Qed.

Lemma post_dist p b : is_joint p -> 0 < marg2 p b -> is_dist (post p b).
Proof.
move=> [h s] m; split=> [a|].
  by rewrite /post /Rdiv; apply: Rmult_le_pos => //; apply: Rlt_le; apply: Rinv_0_lt_compat.
by rewrite /post /Rdiv sumR_scar -/(marg2 p b) Rinv_r //; lra.
Qed.

Lemma marg2_post p a b : is_joint p -> marg2 p b * post p b a = p a b.
Proof.
move=> j; case: (Req_dec (marg2 p b) 0) => [z|nz].
  by rewrite z (marg2_eq0 a j z); lra.
by rewrite /post; field.
Qed.

Lemma condH_ge0 p : is_joint p -> 0 <= condH p.
Proof.
move=> j; apply: sumR_ge0 => b _.
case: (Req_dec (marg2 p b) 0) => [->|nz]; first lra.
have m := marg2_ge0 b j.
by apply: Rmult_le_pos => //; apply: H_ge0; apply: post_dist j _; lra.
Qed.

(* Averaging a pointwise entropy bound. *)
Lemma condH_le p f : is_joint p ->
  (forall b, 0 < marg2 p b -> H (post p b) <= f b) ->
  condH p <= \sum_b marg2 p b * f b.
Proof.
move=> j h; apply: leR_sum => b _.
have m := marg2_ge0 b j.
case: (Req_dec (marg2 p b) 0) => [->|nz]; first lra.
by apply: Rmult_le_compat_l => //; apply: h; lra.
Qed.

(* Joint entropy H(A, B). *)
Definition Hjoint p := H (fun ab : A * B => p ab.1 ab.2).

(* Chain rule: H(A, B) = H(B) + H(A | B). *)
Lemma chain_rule p : is_joint p -> Hjoint p = H (marg2 p) + condH p.
Proof.
move=> pj.
have term : forall a b, p a b * log2 (p a b)
    = p a b * log2 (marg2 p b) + marg2 p b * (post p b a * log2 (post p b a)).
  move=> a b; case: (Req_dec (p a b) 0) => [z|nz].
    rewrite z /post z /Rdiv !Rmult_0_l; ring.
  have pp : 0 < p a b by have := pj.1 a b; lra.
  have mp : 0 < marg2 p b.
    by apply: (Rlt_le_trans _ (p a b)) => //; apply: leR_sum_term => a'; exact: pj.1.
  rewrite -Rmult_assoc (marg2_post a b pj) -Rmult_plus_distr_l; congr (_ * _).
  rewrite -log2_mul //; last by rewrite /post; apply: Rdiv_lt_0_compat.
  by rewrite (marg2_post a b pj).
rewrite /Hjoint /H sumR_pair exchange_big /=.
rewrite (eq_bigr (fun b => \sum_a (p a b * log2 (marg2 p b)
                 + marg2 p b * (post p b a * log2 (post p b a))))); last first.
  by move=> b _; apply: eq_bigr => a _; exact: term.
rewrite (eq_bigr (fun b => marg2 p b * log2 (marg2 p b)
                 + marg2 p b * (\sum_a post p b a * log2 (post p b a)))); last first.
  by move=> b _; rewrite big_split /= sumR_scar sumR_scal.
rewrite big_split /= /condH.
have -> : \sum_b marg2 p b * - (\sum_a post p b a * log2 (post p b a))
        = - (\sum_b marg2 p b * (\sum_a post p b a * log2 (post p b a))).
  by rewrite -sumR_opp; apply: eq_bigr => b _; ring.
ring.
Qed.

End Joint.

Definition swap (A B : finType) (p : A -> B -> R) (b : B) (a : A) := p a b.

Lemma swap_joint (A B : finType) (p : A -> B -> R) : is_joint p -> is_joint (swap p).
Proof. by case=> h s; split=> [b a|]; [exact: h | rewrite exchange_big]. Qed.

Lemma Hjoint_swap (A B : finType) (p : A -> B -> R) : Hjoint (swap p) = Hjoint p.
Proof.
rewrite /Hjoint /H !sumR_pair exchange_big /=; congr (- _).
Qed.

Lemma marg2_swap (A B : finType) (p : A -> B -> R) a : marg2 (swap p) a = marg1 p a.
Proof. by []. Qed.

(* H(A, B) >= H(A). *)
Lemma Hjoint_ge_marg1 (A B : finType) (p : A -> B -> R) :
  is_joint p -> H (marg1 p) <= Hjoint p.
Proof.
move=> pj; rewrite -Hjoint_swap chain_rule; last exact: swap_joint.
rewrite (H_ext (q' := marg1 p)) //.
have := condH_ge0 (swap_joint pj); lra.
Qed.
